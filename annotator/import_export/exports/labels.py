"""Every annotator's labels, one row per label (`export --format labels`), so anyone can audit who said what.

`labels.{jsonl,csv,parquet}` (`file_format`): `data_id, annotator, human_check, difficulty_eval, comment,
seconds_spent, created_at, updated_at, gold` (gold: the candidate has a gold label). With `with_history`, a
second file `label_history.{ext}` holds every label event, oldest first: `data_id, annotator, action, at`
and the label before and after as `old_human_check, old_difficulty_eval, old_comment, new_human_check,
new_difficulty_eval, new_comment` (empty for a new label's "before"). A second flat file rather than a list
in each row, so that CSV and Parquet hold the same as JSONL. Times are UTC, ISO 8601 in JSONL and CSV,
timestamps in Parquet; system annotators (imports) are included under their names (`import:...`). CSV text
cells that a spreadsheet would run as a formula (a comment `=HYPERLINK(...)`) get a `'` in front
(`annotator._util.csv_cells`); JSONL and Parquet keep the exact text. Written by the one table writer
(`annotator.import_export.exports.rows`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Annotation
from annotator.database.queries import iter_query, label_events_query, labels_query
from annotator.import_export.exports.rows import FILE_FORMATS, write_table

LABEL_FIELDS = {
    "data_id": "string",
    "annotator": "string",
    "human_check": "int",
    "difficulty_eval": "int",
    "comment": "string",
    "seconds_spent": "float",
    "created_at": "time",
    "updated_at": "time",
    "gold": "bool",
}
_LABEL_PARTS = ("human_check", "difficulty_eval", "comment")
HISTORY_FIELDS = {
    "data_id": "string",
    "annotator": "string",
    "action": "string",
    "at": "time",
    **{f"{when}_{part}": LABEL_FIELDS[part] for when in ("old", "new") for part in _LABEL_PARTS},
}


def _history_rows(session: Session) -> Iterator[dict[str, Any]]:
    for event in iter_query(session, label_events_query()):
        row = {name: event[name] for name in ("data_id", "annotator", "action", "at")}
        for when in ("old", "new"):
            label = event[when] or {}
            row.update({f"{when}_{part}": label.get(part) for part in _LABEL_PARTS})
        yield row


def write_labels(
    session: Session, out: Path, *, file_format: str = "jsonl", with_history: bool = False
) -> dict[str, int]:
    """`labels.{file_format}` and, `with_history`, `label_history.{file_format}`; returns {file: rows}."""
    if file_format not in FILE_FORMATS:
        raise ValueError(f"unknown file format {file_format!r} for labels; choose one of {', '.join(FILE_FORMATS)}")
    out.mkdir(parents=True, exist_ok=True)
    name = f"labels.{file_format}"
    rows = iter_query(session, labels_query())
    counts = {name: write_table(out / name, rows, file_format=file_format, columns=LABEL_FIELDS)}
    if with_history:
        history = f"label_history.{file_format}"
        counts[history] = write_table(out / history, _history_rows(session), file_format=file_format,
                                      columns=HISTORY_FIELDS)
    return counts


def nothing_to_write(session: Session) -> str | None:
    """Why the labels export would hold no label, or None."""
    return None if session.scalar(select(Annotation.id).limit(1)) is not None else "nobody has labelled a candidate yet"
