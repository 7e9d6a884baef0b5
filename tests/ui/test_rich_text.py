from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ui import rich_text

TAG = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9-]*)([^>]*)>")
ATTRIBUTE = re.compile(r"([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=")


def _allowed(markup: str) -> bool:
    """Only allow-listed MathML elements and attributes, no URL, no event handler."""
    for name, attributes in TAG.findall(markup):
        if name not in rich_text.MATH_TAGS:
            return False
        if any(attribute not in rich_text.MATH_ATTRIBUTES for attribute in ATTRIBUTE.findall(attributes)):
            return False
    return "javascript:" not in markup.lower()


def test_text_stays_text_and_math_is_typeset() -> None:
    runs = rich_text.runs("Let $x^2$ be <b>bold</b> [link](javascript:alert(1)) **no**")
    assert runs == [
        {"t": "Let "},
        {"m": '<math display="inline"><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow></math>'},
        {"t": " be <b>bold</b> [link](javascript:alert(1)) **no**"},
    ]
    display = rich_text.runs("$$\\frac{a}{b}$$")[0]["m"]
    assert display.startswith('<math display="block">') and "<mfrac>" in display


def test_math_runs_carry_their_source_as_written_when_asked() -> None:
    """Review's `M` shows the math as written: each typeset run also carries its source, delimiters included; math
    that stays text has no second copy."""
    runs = rich_text.runs("So $x^2$ and \\[ \\frac{1}{2} \\] then $\\href{u}{x}$.", source=True)
    assert [run.get("s") for run in runs if "m" in run] == ["$x^2$", "\\[ \\frac{1}{2} \\]"]
    assert all("s" not in run for run in runs if "t" in run)
    assert "s" not in rich_text.runs("So $x^2$.")[1]


def test_math_that_could_carry_a_link_or_html_is_shown_as_its_source() -> None:
    for source in ("$\\href{javascript:alert(1)}{x}$", "$x$$y$", "$\\url{http://tracker.example/x}$"):
        runs = rich_text.runs(source)
        assert all("m" not in run or _allowed(run["m"]) for run in runs), runs
    assert rich_text.runs("$\\href{javascript:alert(1)}{x}$") == [{"t": "$\\href{javascript:alert(1)}{x}$"}]
    # HTML inside math becomes MathML text, never an element.
    markup = rich_text.runs("$<img src=x onerror=alert(1)>$")
    assert all(_allowed(run["m"]) for run in markup if "m" in run)
    assert all("<img" not in run.get("m", "") for run in markup)


def test_the_diff_marks_what_each_side_lost_or_gained() -> None:
    old, new, changed = rich_text.diff("Find $x$ when y = 2.", "Find $x$.")
    assert changed
    assert "".join(run.get("t", "") for run in old if run.get("k") == "del").split() == ["when", "y", "=", "2."]
    assert [run for run in new if run.get("k")] == [] or all(run["k"] == "add" for run in new if run.get("k"))
    assert rich_text.diff("same", "same")[2] is False


def test_the_guideline_keeps_its_bold_and_code_as_runs() -> None:
    assert rich_text.guide("A **bold** and `code`.\n\nNext.") == [
        [{"t": "A "}, {"t": "bold", "b": 1}, {"t": " and "}, {"t": "code", "c": 1}, {"t": "."}], [{"t": "Next."}]]


@given(st.lists(st.sampled_from([*"$\\{}<>^_ab1=&\"' /:", "href", "frac", "script", "style", "mathvariant"]),
                max_size=30).map("".join))
def test_whatever_latex_comes_in_only_allow_listed_mathml_goes_out(text: str) -> None:
    for run in rich_text.runs(text):
        assert set(run) <= {"t", "m"}
        if "m" in run:
            assert run["m"].startswith("<math") and _allowed(run["m"]), run["m"]
