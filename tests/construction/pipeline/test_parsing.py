"""Reading `### Section ###` answers the way models really write them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.construction.pipeline import parsing
from annotator.construction.pipeline.parsing import ParseError


@pytest.mark.parametrize(
    "answer",
    [
        "### Analysis ###: drop n.\n### Rewritten Mathematical Question ###: Find x.",
        "### Analysis ### drop n.\n### Rewritten Mathematical Question ### Find x.",
        "###Analysis###:drop n.\n###Rewritten Mathematical Question###:Find x.",
        "### 1. Analysis ###: drop n.\n### 2. Rewritten Mathematical Question ###:\n\n  Find x.  \n",
        "## Analysis\ndrop n.\n## Rewritten Mathematical Question\nFind x.",
        "**Analysis**: drop n.\n**Rewritten Mathematical Question**: Find x.",
        "### analysis ###: drop n. ### rewritten mathematical question ###: **Find x.**",
        "### Rewritten Mathematical Question ###: <rewritten>\n### Analysis ###: drop n.\n"
        "### Rewritten Mathematical Question ###: Find x.",
    ],
)
def test_rewrite_sections_in_many_spellings(answer: str) -> None:
    assert parsing.find(answer, parsing.REWRITTEN_QUESTION) == "Find x."
    assert parsing.find(answer, parsing.ANALYSIS) == "drop n."


def test_bold_words_inside_a_section_do_not_cut_it() -> None:
    answer = "### Analysis ###: **Step 1**: remove n.\n**Step 2**: check.\n### Rewritten Mathematical Question ###: Q"
    assert parsing.find(answer, parsing.ANALYSIS) == "**Step 1**: remove n.\n**Step 2**: check."


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("True", True), ("true", True), ("True.", True), ("**False**", False), (" false\n", False),
        ("### Your judgement (True or False) ###: True.", True),
        ("### Your Judgment ###\nFALSE", False),
        ("### Unsolvable Analysis ###: n is missing.\n### Your judgement (True or False) ###: True", True),
        ("### Unsolvable Analysis ###: n is missing, so it is unsolvable.\nTrue", True),
        ("The judgement is: False", False),
    ],
)
def test_judgements(answer: str, verdict: bool) -> None:
    assert parsing.judgement(answer) is verdict


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   \n",
        "Maybe.",
        "### Unsolvable Analysis ###: it depends whether true or false.",
        "### Something Else ###: True",
    ],
)
def test_unreadable_judgements_raise(answer: str) -> None:
    with pytest.raises(ParseError):
        parsing.judgement(answer)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("x is positive.\n\ny is 3.", ["x is positive.", "y is 3."]),
        ("### Extracted Condition ###: 1. x is positive.\n2. y is 3.", ["x is positive.", "y is 3."]),
        ("Condition 1: a\n\nCondition 2: b\n\nCondition 3: c\n\nCondition 4: d", ["a", "b", "c", "d"]),
        ("- a\n- b", ["a", "b"]),
        ("x is positive.\\n\\ny is 3.", ["x is positive.", "y is 3."]),
        ("### Extracted Conditions ###\n(1) a\n(2) b", ["a", "b"]),
    ],
)
def test_conditions(answer: str, expected: list[str]) -> None:
    assert parsing.conditions(answer) == expected


def test_conditions_are_all_kept_unless_capped() -> None:
    """The released ReliableMath data has condition indices up to 6 (`aime_18_remove_4`, `amc_75_contradict_6`)
    although the Appendix I extraction prompt asks for one to three: every listed condition is kept."""
    answer = "\n\n".join(f"{k}. condition {k}" for k in range(1, 7))
    assert parsing.conditions(answer) == [f"condition {k}" for k in range(1, 7)]
    assert parsing.conditions(answer, limit=3) == ["condition 1", "condition 2", "condition 3"]


@pytest.mark.parametrize("answer", ["", "### Analysis ###: nothing here", "### Extracted Condition ###:   "])
def test_no_conditions_raise(answer: str) -> None:
    with pytest.raises(ParseError):
        parsing.conditions(answer)


def test_missing_section_names_what_was_found() -> None:
    with pytest.raises(ParseError, match="no ### Rewritten Mathematical Question ### section.*'Analysis'"):
        parsing.find("### Analysis ###: only this", parsing.REWRITTEN_QUESTION)


def test_headerless_answer_is_the_field_when_the_prompt_ended_with_it() -> None:
    assert parsing.find("  n was removed. ", parsing.REWRITTEN_CONDITION, whole_if_headerless=True) == "n was removed."
    with pytest.raises(ParseError):
        parsing.find("n was removed.", parsing.REWRITTEN_CONDITION)


@given(st.text(max_size=300))
def test_never_crashes_on_arbitrary_text(text: str) -> None:
    for call in (
        lambda: parsing.conditions(text),
        lambda: parsing.judgement(text),
        lambda: parsing.find(text, parsing.REWRITTEN_QUESTION),
    ):
        try:
            call()
        except ParseError:
            pass
