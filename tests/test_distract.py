"""GSM-IC-style distractor variants: templates, role names, number ranges, and candidates in the database."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator import distract
from annotator.db import read_session
from annotator.formats import read
from annotator.importer import import_parts
from annotator.models import Candidate

KIM = (
    "Kim plants 80 cherry pits. 25% of them sprout and Kim sells 6 of the saplings. "
    "How many cherry saplings does she have left?"
)
NATALIA = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)


def test_variants_add_one_table_9_sentence_before_the_question() -> None:
    options = distract.Options(per_problem=8, seed=1)
    variants = distract.make_variants(NATALIA, answer="72", options=options, rng=random.Random(1))
    assert len(variants) == 8
    head, final = distract.split_question(NATALIA)
    for variant in variants:
        assert variant.sentence_template in distract.TEMPLATES
        assert variant.new_question == f"{head} {variant.sentence} {final}"
        assert variant.sentence_label == "out_topic"
    assert {v.role_label for v in variants} == {"overlapped", "nonoverlapped"}
    assert {v.number_label for v in variants} == {"in_range", "out_range"}
    assert len({v.new_question for v in variants}) == 8


def test_role_names_overlap_with_the_character_or_come_from_the_name_set() -> None:
    variants = distract.make_variants(NATALIA, options=distract.Options(per_problem=12), rng=random.Random(2))
    for variant in variants:
        if variant.role_label == "overlapped":
            assert re.fullmatch(r"Natalia's (father|mother|brother|sister|neighbor)", variant.role)
        else:
            assert variant.role in distract.OTHER_NAMES


def test_numbers_in_range_and_out_of_range_follow_appendix_a() -> None:
    low, high = distract.number_range(NATALIA, "48 / 2 = 24 clips in May. 48 + 24 = 72", "72")
    assert (low, high) == (2.0, 72.0)
    rng = random.Random(3)
    for _ in range(500):
        assert 1 <= distract.in_range_number(low, high, rng) <= 720
        out = distract.out_of_range_number(low, high, rng)
        assert out > 720 and re.fullmatch(r"[1-9]0*", str(out))
    # l > 10^5: out-of-range numbers come from [2, l/10).
    for _ in range(200):
        assert 2 <= distract.out_of_range_number(482_653, 845_640, rng) < 48_266
    assert distract.numbers_in("Springfield has 482,653 people and 1.5 parks") == [482653.0, 1.5]


def test_an_overlapping_role_gets_the_table_10_fix() -> None:
    options = distract.Options(per_problem=4, role="overlapped", seed=0)
    for variant in distract.make_variants(KIM, answer="14", options=options, rng=random.Random(0)):
        assert variant.new_question.endswith("How many cherry saplings does Kim have left?")
    nonoverlapped = distract.make_variants(
        KIM, answer="14", options=distract.Options(per_problem=2, role="nonoverlapped"), rng=random.Random(0)
    )
    assert all(v.new_question.endswith("does she have left?") for v in nonoverlapped)


def test_a_problem_without_a_character_only_gets_other_names() -> None:
    variants = distract.make_variants(
        r"Evaluate $\int_0^1 x\,dx$. Compute twice the result.",
        options=distract.Options(per_problem=3),
        rng=random.Random(0),
    )
    assert {v.role_label for v in variants} == {"nonoverlapped"}


@pytest.mark.parametrize(("field", "value"), [("per_problem", 0), ("role", "both ways"), ("number", "huge")])
def test_bad_options_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValueError):
        distract.Options(**{field: value})


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
    options = distract.Options(per_problem=3, seed=9)
    records = distract.variants_for_database(engine, options=options)
    assert [r.data_id for r in records] == [f"umwp_1_distractor_{k}" for k in (1, 2, 3)]
    summary = import_parts([distract.as_import_part(records)], engine=engine)
    assert summary.candidates_added == 3
    # The same seed again: the same candidates, nothing new.
    again = import_parts(
        [distract.as_import_part(distract.variants_for_database(engine, options=options))], engine=engine
    )
    assert (again.candidates_added, again.unchanged) == (0, 3)
    with read_session(engine) as session:
        candidates = list(session.execute(select(Candidate).order_by(Candidate.id)).scalars())
    for candidate in candidates:
        assert candidate.rewrite_type == "distractor" and candidate.ground_truth == [72.0]
        assert candidate.rewritten_condition in candidate.rewritten_question
        assert candidate.provenance["generator"] == "distract"
    path = distract.write_gsm_ic(records, tmp_path / "out")
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
