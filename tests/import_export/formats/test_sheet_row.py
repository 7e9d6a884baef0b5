"""`_sheet_row.ordinary_candidate`, the quick reading of a plain annotation-sheet row: whatever a row holds, it gives
the very record `reliablemath.sheet_candidate_by_field` makes of it, or None, so that the field-by-field reading
(its rules, its one-line errors) decides; never a record for a row that reading refuses."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from annotator.import_export.formats import _sheet_row
from annotator.import_export.formats.reliablemath import sheet_candidate, sheet_candidate_by_field
from annotator.import_export.records import MAX_TEXT_CHARS, InputError, Location

LOC = Location("sheet.json", "record 3")
ODD = st.one_of(st.none(), st.just(""), st.just("  "), st.integers(-1, 2), st.booleans(), st.floats(allow_nan=True),
                st.just("1"), st.just("1.0"), st.lists(st.integers(), max_size=2), st.just({"a": 1}),
                st.just("x" * (MAX_TEXT_CHARS + 1)))
TEXT = st.one_of(st.text(min_size=1, max_size=12), ODD)
IDS = st.one_of(st.sampled_from(["math_3_remove_1", "gsm8k_12_contradict_2", "aime_0_remove_0", "bad id",
                                 "a_b_1_remove_1"]), TEXT)
PLAIN = {"unsol_id": "math_3_remove_1", "data_source": "math", "question": "How far?", "ground_truth": "12",
         "rewritten_condition": "The speed was removed.", "rewritten_question": "How far, without the speed?",
         "unsolvable_reason": "No speed.", "human_check": 1, "difficulty_eval": 0}


def _by_field(row: dict[str, Any]) -> Any:
    try:
        return sheet_candidate_by_field(row, LOC, annotator="alice", position=4)
    except InputError as error:
        return error


@given(st.dictionaries(
    st.sampled_from(["unsol_id", "data_id", "data_source", "question", "ground_truth", "rewritten_condition",
                     "rewritten_condition:", "rewritten_question", "unsolvable_reason", "extracted_condition",
                     "solution", "comment", "human_check", "difficulty_eval", "rewrite_type"]),
    st.one_of(TEXT, IDS), max_size=15,
).map(lambda changes: {**PLAIN, **changes}))
@example(PLAIN)
@example({**PLAIN, "human_check": 0, "difficulty_eval": None, "comment": "unclear"})
@example({**PLAIN, "human_check": None, "difficulty_eval": None, "ground_truth": 12, "solution": "s"})
def test_the_quick_reading_agrees_with_the_field_by_field_one(row: dict[str, Any]) -> None:
    quick, full = _sheet_row.ordinary_candidate(row, LOC, annotator="alice", position=4), _by_field(row)
    if quick is not None:
        assert not isinstance(full, InputError), full
        assert quick == full
    made = sheet_candidate(row, LOC, annotator="alice", position=4) if not isinstance(full, InputError) else full
    assert made == full


def test_a_plain_row_is_read_quickly() -> None:
    """The rows of a large sheet take the quick reading (an empty implementation would always say None)."""
    record = _sheet_row.ordinary_candidate(PLAIN, LOC, annotator="alice", position=4)
    assert record is not None and record.data_id == "math_3_remove_1" and record.label is not None
    assert (record.label.human_check, record.label.difficulty_eval, record.label.annotator) == (1, 0, "alice")
    assert record.problem is not None and record.problem.position == 3
