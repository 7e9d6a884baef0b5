"""GSM-IC-style distractor variants: templates, role names, number ranges, and candidates in the database."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.construction import gsm_ic
from annotator.database.engine import read_session
from annotator.database.models import Candidate
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts

KIM = (
    "Kim plants 80 cherry pits. 25% of them sprout and Kim sells 6 of the saplings. "
    "How many cherry saplings does she have left?"
)
NATALIA = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)


def test_variants_add_one_table_9_sentence_before_the_question() -> None:
    options = gsm_ic.Options(per_problem=8, seed=1)
    variants = gsm_ic.make_variants(NATALIA, answer="72", options=options, rng=random.Random(1))
    assert len(variants) == 8
    head, final = gsm_ic.split_question(NATALIA)
    for variant in variants:
        assert variant.sentence_template in gsm_ic.TEMPLATES
        assert variant.new_question == f"{head} {variant.sentence} {final}"
        assert variant.sentence_label == "out_topic"
    assert {v.role_label for v in variants} == {"overlapped", "nonoverlapped"}
    assert {v.number_label for v in variants} == {"in_range", "out_range"}
    assert len({v.new_question for v in variants}) == 8


def test_role_names_overlap_with_the_character_or_come_from_the_name_set() -> None:
    variants = gsm_ic.make_variants(NATALIA, options=gsm_ic.Options(per_problem=12), rng=random.Random(2))
    for variant in variants:
        if variant.role_label == "overlapped":
            assert re.fullmatch(r"Natalia's (father|mother|brother|sister|neighbor)", variant.role)
        else:
            assert variant.role in gsm_ic.OTHER_NAMES


def test_numbers_in_range_and_out_of_range_follow_appendix_a() -> None:
    low, high = gsm_ic.number_range(NATALIA, "48 / 2 = 24 clips in May. 48 + 24 = 72", "72")
    assert (low, high) == (2.0, 72.0)
    rng = random.Random(3)
    for _ in range(500):
        assert 1 <= gsm_ic.in_range_number(low, high, rng) <= 720
        out = gsm_ic.out_of_range_number(low, high, rng)
        assert out > 720 and re.fullmatch(r"[1-9]0*", str(out))
    # l > 10^5: out-of-range numbers come from [2, l/10).
    for _ in range(200):
        assert 2 <= gsm_ic.out_of_range_number(482_653, 845_640, rng) < 48_266
    assert gsm_ic.numbers_in("Springfield has 482,653 people and 1.5 parks") == [482653.0, 1.5]


def test_an_overlapping_role_gets_the_table_10_fix() -> None:
    options = gsm_ic.Options(per_problem=4, role="overlapped", seed=0)
    for variant in gsm_ic.make_variants(KIM, answer="14", options=options, rng=random.Random(0)):
        assert variant.new_question.endswith("How many cherry saplings does Kim have left?")
    nonoverlapped = gsm_ic.make_variants(
        KIM, answer="14", options=gsm_ic.Options(per_problem=2, role="nonoverlapped"), rng=random.Random(0)
    )
    assert all(v.new_question.endswith("does she have left?") for v in nonoverlapped)


def test_a_problem_without_a_character_only_gets_other_names() -> None:
    variants = gsm_ic.make_variants(
        r"Evaluate $\int_0^1 x\,dx$. Compute twice the result.",
        options=gsm_ic.Options(per_problem=3),
        rng=random.Random(0),
    )
    assert {v.role_label for v in variants} == {"nonoverlapped"}


@pytest.mark.parametrize(("field", "value"), [("per_problem", 0), ("role", "both ways"), ("number", "huge")])
def test_bad_options_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValueError):
        gsm_ic.Options(**{field: value})


def test_variants_of_database_problems_become_distractor_candidates(engine: Engine, tmp_path: Path) -> None:
    source = tmp_path / "UMWP.jsonl"
    source.write_text(
        json.dumps(
            {
                "id": 1,
                "question": NATALIA,
                "answer": [72.0],
                "answerable": True,
                "category": None,
                "relevant_ids": None,
                "source": "GSM8K",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    import_parts(read(source), engine=engine)
    options = gsm_ic.Options(per_problem=3, seed=9)
    records = gsm_ic.variants_for_database(engine, options=options)
    assert [r.data_id for r in records] == [f"umwp_1_distractor_{k}" for k in (1, 2, 3)]
    summary = import_parts([gsm_ic.as_import_part(records)], engine=engine)
    assert summary.candidates_added == 3
    # The same seed again: the same candidates, nothing new.
    again = import_parts(
        [gsm_ic.as_import_part(gsm_ic.variants_for_database(engine, options=options))], engine=engine
    )
    assert (again.candidates_added, again.unchanged) == (0, 3)
    with read_session(engine) as session:
        candidates = list(session.execute(select(Candidate).order_by(Candidate.id)).scalars())
    for candidate in candidates:
        assert candidate.rewrite_type == "distractor" and candidate.ground_truth == [72.0]
        assert candidate.rewritten_condition in candidate.rewritten_question
        assert candidate.provenance["generator"] == "distract"
    path = gsm_ic.write_gsm_ic(records, tmp_path / "out")
    written = json.loads(path.read_text(encoding="utf-8"))
    assert [w["new_question"] for w in written] == [c.rewritten_question for c in candidates]
    assert set(written[0]) == {
        "original_question",
        "new_question",
        "answer",
        "role",
        "number",
        "sentence_template",
        "role_label",
        "number_label",
        "sentence_label",
    }


def test_in_topic_and_off_topic_sentences_are_balanced_and_labelled() -> None:
    """GSM-IC Appendix A 1(a), (d): in-topic sentences (about the problem's own topic) and off-topic ones
    (Table 9), four of each per problem; the `sentence_label` says which."""
    assert gsm_ic.units_in(KIM) == ["cherry pits"]
    variants = gsm_ic.make_variants(KIM, answer="14", options=gsm_ic.Options(per_problem=8), rng=random.Random(4))
    labels = Counter(v.sentence_label for v in variants)
    assert labels == {"in_topic": 4, "out_topic": 4}
    for variant in variants:
        if variant.sentence_label == "in_topic":
            assert "cherry pits" in variant.sentence and variant.sentence_template not in gsm_ic.TEMPLATES
            assert "in topic" in (variant.ambiguity_note or "")
        else:
            assert variant.sentence_template in gsm_ic.TEMPLATES
    # Every (topic, role, number) kind once before any comes twice.
    assert len({(v.sentence_label, v.role_label, v.number_label) for v in variants}) == 8
    only_off = gsm_ic.make_variants(
        KIM, options=gsm_ic.Options(per_problem=4, topic="out_topic"), rng=random.Random(4)
    )
    assert {v.sentence_label for v in only_off} == {"out_topic"}


JAYSON = (
    "When Jayson is 10 his dad is four times his age and his mom is 2 years younger than his dad. "
    "How old was Jayson's mom when he was born?"
)
TEAIRRA = (
    "Teairra has 5 shirts and 24 pairs of pants in her closet. If 3 of Teairra's shirts are plaid and 5 of "
    "Teairra's pants are purple, how many shirts and pants does Teairra have which are neither plaid nor purple?"
)


@pytest.mark.parametrize(
    ("question", "character"),
    [(JAYSON, "Jayson"), (TEAIRRA, "Teairra"), (NATALIA, "Natalia"), (KIM, "Kim"),
     ("Megan is an actress. She was the lead actress in 80% of her work. How many plays?", "Megan"),
     ("Uncle Jude baked 256 cookies. He gave 15 cookies to Tim. How many are left?", "Jude"),
     ("A mother planted a 16-inch tree on her son's first birthday. How tall is it?", None),
     ("Lunch at Texas BBQ costs 12 dollars. How much do 3 lunches cost?", None)],
)
def test_the_character_for_overlapped_roles(question: str, character: str | None) -> None:
    """GSM-IC Appendix A 2(a), (c): overlapped role names are built on the original character. A name opening
    a sentence ("When Jayson ...", "Teairra has ...") is still a name; places are not."""
    assert gsm_ic.main_character(question) == character


def test_the_summary_counts_problems_without_a_character_or_topic() -> None:
    """What the `distract` command reports: problems that got no overlapped role (GSM-IC 2(c)) or no in-topic
    sentence (1(a))."""
    records = [
        gsm_ic.CandidateRecord(
            data_id=f"gsm8k_{i}_distractor_1", data_source="gsm8k", problem_position=i, rewrite_type="distractor",
            condition_index=1, rewritten_question="q", question=question,
        )
        for i, question in enumerate([KIM, NATALIA, "A box is 8 inches tall. How tall is it in feet?"])
    ]
    assert gsm_ic.summary(records) == {"problems": 3, "without_character": 1, "without_in_topic": 2}


def test_out_of_range_numbers_span_decades() -> None:
    """GSM-IC Appendix A 3(b): out-of-range n = a * 10^b from [10r, inf), a and b non-negative integers; not
    one decade only."""
    rng = random.Random(5)
    drawn = [gsm_ic.out_of_range_number(2, 72, rng) for _ in range(2000)]
    assert all(n > 720 and re.fullmatch(r"[1-9]0*", str(n)) for n in drawn)
    assert {len(str(n)) for n in drawn} == {3, 4, 5}


def test_never_one_years_or_one_tomatoes() -> None:
    """Table 9's templates are plural; with the number 1 the sentence is singular, and in-topic sentences
    (whose unit is a plural from the problem) never get 1."""
    variant = gsm_ic.Variant("", "Ada", "1", "{role} is {number} years old.", "nonoverlapped", "in_range")
    assert variant.sentence == "Ada is 1 year old."
    rng = random.Random(6)
    small = "Tom has 2 apples and 3 pears. How many fruits does Tom have?"
    sentences = [
        v.sentence
        for _ in range(300)
        for v in gsm_ic.make_variants(small, answer="5", options=gsm_ic.Options(per_problem=8), rng=rng)
    ]
    assert any(s.endswith("1 year old.") or " 1 " in s for s in sentences)
    assert not any(re.search(r"\b1 (years|feet|tomatoes|books|apples|pears)\b", s) for s in sentences)
