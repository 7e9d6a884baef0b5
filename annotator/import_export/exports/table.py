"""Flat tables of candidates: JSONL, CSV and Parquet, one row per candidate with its problem's fields.

CSV and Parquet cells cannot keep a JSON type, so they hold `ground_truth` and `source_id` as JSON text in
`{name}_json` columns (`annotator.import_export.formats.table.JSON_ENCODED`), which an import decodes again. CSV text
cells that a spreadsheet would run as a formula get a `'` in front (`annotator._util.csv_cells`; an import removes
it). Rows stream from the database into the one table writer (`annotator.import_export.exports.rows`): memory does not
grow with the number of candidates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Text, select, type_coerce
from sqlmodel import Session

from annotator.database.models import Candidate
from annotator.database.queries import CANDIDATE_COLUMNS, candidates_query, iter_candidates
from annotator.database.raw_rows import iter_raw
from annotator.import_export.exports.rows import FILE_FORMATS, write_table
from annotator.import_export.formats.table import JSON_ENCODED

FLAT_COLUMNS = (
    "data_id",
    "data_source",
    "problem_position",
    "source_id",
    "question",
    "ground_truth",
    "solution",
    "rewrite_type",
    "condition_index",
    "extracted_condition",
    "rewritten_question",
    "rewritten_condition",
    "unsolvable_reason",
    "status",
    "label_count",
    "human_check",
    "difficulty_eval",
)
# Only what flat rows hold: decoding unused JSON columns is a large share of an export's time.
_BY_KEY = {column.key: column for column in CANDIDATE_COLUMNS}
FLAT_SELECT = tuple(_BY_KEY[name] for name in FLAT_COLUMNS)  # rows come out as flat rows
_RAW_JSON = tuple(name for name in FLAT_COLUMNS if name in JSON_ENCODED)
_JSONL_SELECT = tuple(_BY_KEY[name] for name in FLAT_COLUMNS if name not in _RAW_JSON) + tuple(
    type_coerce(_BY_KEY[name], Text).label(name) for name in _RAW_JSON
)


def flat_row(candidate: dict[str, Any]) -> dict[str, Any]:
    """A candidate as a CSV/Parquet row: JSON-typed values become `{name}_json` text cells."""
    row: dict[str, Any] = {}
    for column in FLAT_COLUMNS:
        value = candidate.get(column)
        if column in JSON_ENCODED:
            row[f"{column}_json"] = json.dumps(value, ensure_ascii=False)
        else:
            row[column] = value
    return row


# Each CSV / Parquet column with its kind (`rows.KINDS`): JSON-typed values are `{name}_json` text cells.
_INTEGER = ("problem_position", "condition_index", "label_count", "human_check", "difficulty_eval")
FLAT_KINDS = {
    (f"{name}_json" if name in JSON_ENCODED else name): ("int" if name in _INTEGER else "string")
    for name in FLAT_COLUMNS
}
FILES = {file_format: f"candidates.{file_format}" for file_format in FILE_FORMATS}


def write_candidates(session: Session, out: Path, file_format: str) -> dict[str, int]:
    """`candidates.{file_format}`, one row per candidate in id order."""
    out.mkdir(parents=True, exist_ok=True)
    if file_format == "jsonl":
        # JSON-typed columns are stored as JSON text: spliced in rather than decoded and encoded again.
        rows = iter_raw(session, candidates_query(columns=_JSONL_SELECT, order="id"))
        count = write_table(out / FILES["jsonl"], rows, file_format="jsonl", json_text=_RAW_JSON)
    else:
        rows = (flat_row(c) for c in iter_candidates(session, columns=FLAT_SELECT, order="id"))
        count = write_table(out / FILES[file_format], rows, file_format=file_format, columns=FLAT_KINDS)
    return {FILES[file_format]: count}


def write_jsonl(session: Session, out: Path) -> dict[str, int]:
    return write_candidates(session, out, "jsonl")


def write_csv(session: Session, out: Path) -> dict[str, int]:
    return write_candidates(session, out, "csv")


def write_parquet(session: Session, out: Path) -> dict[str, int]:
    return write_candidates(session, out, "parquet")


def nothing_to_write(session: Session) -> str | None:
    """Why a table of candidates would hold no row, or None."""
    return None if session.scalar(select(Candidate.id).limit(1)) is not None else "the database holds no candidates"
