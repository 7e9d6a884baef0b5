"""The paper's annotation sheet (Fig. 10): every candidate with every field, labels as resolved so far."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator.database.queries import iter_candidates, original_question_and_answer
from annotator.import_export.exports import table
from annotator.import_export.exports.reliablemath import write_json
from annotator.labelling.adjudication import adjudications, label_provenance

FILE_NAME = "annotation.json"


def sheet_record(candidate: dict[str, Any], adjudicated: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Fig. 10 annotation-sheet row with every field, labels as resolved so far (empty when unlabelled),
    and where the resolved label comes from (`label_source`; by whom and when, when adjudicated)."""
    question, ground_truth = original_question_and_answer(candidate)
    return {
        "unsol_id": candidate["data_id"],
        "data_source": candidate["data_source"],
        "question": question,
        "ground_truth": ground_truth,
        "rewritten_condition": candidate["rewritten_condition"],
        "rewritten_question": candidate["rewritten_question"],
        "unsolvable_reason": candidate["unsolvable_reason"],
        "human_check": candidate["human_check"],
        "difficulty_eval": candidate["difficulty_eval"],
        "label_source": candidate["label_source"],
        "adjudicated_by": (adjudicated or {}).get("adjudicated_by"),
        "adjudicated_at": (adjudicated or {}).get("adjudicated_at"),
    }


def write_sheet(session: Session, out: Path) -> dict[str, int]:
    """The paper's annotation sheet (Fig. 10), every candidate with every field."""
    adjudicated = adjudications(session)
    records = [sheet_record(c, adjudicated.get(c["id"])) for c in iter_candidates(session)]
    write_json(out / FILE_NAME, records, {})
    return {FILE_NAME: len(records)}


def manifest(session: Session) -> dict[str, Any]:
    """The sheet's manifest entry `labels`: where each labelled candidate's resolved label comes from."""
    return {"labels": label_provenance(session)}


nothing_to_write = table.nothing_to_write  # the sheet has a row per candidate, as the flat tables do
