"""An annotation sheet's ordinary row, checked and made into records without a call per field: what nearly every
row of a large sheet is. `reliablemath.sheet_candidate` tries it first and reads the row field by field (its rules,
its errors) whenever this says None: anything unusual, any bad field, gets the full checks and their one-line error.
"""

from __future__ import annotations

from typing import Any

from annotator.database.vocabulary import DataId
from annotator.import_export.records import MAX_TEXT_CHARS, CandidateRecord, LabelRecord, Location, ProblemRecord

_OPTIONAL_TEXT = ("rewritten_condition", "unsolvable_reason", "extracted_condition", "solution", "comment")


def _label(obj: dict[str, Any], annotator: str, comment: str | None) -> LabelRecord | None | bool:
    """The row's label when its fields are plain (1 with 0 or 1, 0 with none, or neither given); False otherwise."""
    check, difficulty = obj.get("human_check"), obj.get("difficulty_eval")
    # Made with the fields in their order, not by name: a call by name costs several times more per row.
    if type(check) is int and type(difficulty) is int and check == 1 and (difficulty == 0 or difficulty == 1):
        return LabelRecord(1, difficulty, annotator, comment)
    if type(check) is int and check == 0 and difficulty is None:
        return LabelRecord(0, None, annotator, comment)
    if check is None and difficulty is None:
        return None
    return False


def ordinary_candidate(obj: dict[str, Any], loc: Location, *, annotator: str,
                       position: int | None) -> CandidateRecord | None:
    """The row's candidate, as `sheet_candidate` makes it, when every field is plain; None otherwise."""
    get = obj.get
    text = get("unsol_id") if "unsol_id" in obj else get("data_id")
    question, rewritten, ground_truth = get("question"), get("rewritten_question"), get("ground_truth")
    # Text as `records.require_str` takes it: not empty or blank, within the size limit; the optional fields None
    # or such text ("" is None there: left to the full checks, as are ground truths other than text or a number).
    for value in (text, question, rewritten):
        if type(value) is not str or not value or len(value) > MAX_TEXT_CHARS or value.isspace():
            return None
    for value in map(get, _OPTIONAL_TEXT):
        if value is not None and (type(value) is not str or not value or len(value) > MAX_TEXT_CHARS
                                  or value.isspace()):
            return None
    if "rewritten_condition:" in obj or not (
            type(ground_truth) is int or (type(ground_truth) is str and len(ground_truth) <= MAX_TEXT_CHARS)):
        return None
    try:
        data_id = DataId.parse(text)
    except ValueError:
        return None
    source = data_id.data_source
    if get("data_source") not in (None, "", source) or get("rewrite_type") not in (None, "", data_id.rewrite_type):
        return None
    label = _label(obj, annotator, get("comment"))
    if label is False:
        return None
    _source, problem_position, rewrite_type, k = data_id
    # The records' fields in their order (`records.CandidateRecord`, `ProblemRecord`), as `_label` makes its label.
    return CandidateRecord(
        str(data_id), source, problem_position, rewrite_type, k, rewritten, get("rewritten_condition"),
        get("unsolvable_reason"), get("extracted_condition"), question, ground_truth, None, None, None, position,
        label, ProblemRecord(source, problem_position, question, ground_truth, None, get("solution"), None, loc),  # type: ignore[arg-type]
        False, loc,
    )
