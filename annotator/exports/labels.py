"""Every annotator's labels, one row per label (`export --format labels`), so anyone can audit who said what.

`labels.{jsonl,csv,parquet}` (`file_format`): `data_id, annotator, human_check, difficulty_eval, comment,
seconds_spent, created_at, updated_at, gold` (gold: the candidate has a gold label). With `with_history`, a
second file `label_history.{ext}` holds every label event, oldest first: `data_id, annotator, action, at`
and the label before and after as `old_human_check, old_difficulty_eval, old_comment, new_human_check,
new_difficulty_eval, new_comment` (empty for a new label's "before"). A second flat file rather than a list
in each row, so that CSV and Parquet hold the same as JSONL. Times are UTC, ISO 8601 in JSONL and CSV,
timestamps in Parquet; system annotators (imports) are included under their names (`import:...`). CSV text
cells that a spreadsheet would run as a formula (a comment `=HYPERLINK(...)`) get a `'` in front
(`annotator.csv_cells`); JSONL and Parquet keep the exact text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator.csv_cells import DictWriter
from annotator.store import iter_query, label_events_query, labels_query

FILE_FORMATS = ("jsonl", "csv", "parquet")
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
_PARQUET_BATCH = 5000


def _history_rows(session: Session) -> Iterator[dict[str, Any]]:
    for event in iter_query(session, label_events_query()):
        row = {name: event[name] for name in ("data_id", "annotator", "action", "at")}
        for when in ("old", "new"):
            label = event[when] or {}
            row.update({f"{when}_{part}": label.get(part) for part in _LABEL_PARTS})
        yield row


def _text(value: Any) -> Any:
    """A value as JSON and CSV hold it: times as ISO 8601."""
    return value.isoformat() if isinstance(value, datetime) else value


def _csv(value: Any) -> Any:
    """A value as a CSV cell holds it: booleans as JSON writes them, times as ISO 8601."""
    return ("true" if value else "false") if isinstance(value, bool) else _text(value)


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({k: _text(v) for k, v in row.items()}, ensure_ascii=False) + "\n")
            count += 1
    return count


def _write_csv(path: Path, rows: Iterable[dict[str, Any]], fields: dict[str, str]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = DictWriter(handle, fieldnames=list(fields))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv(v) for k, v in row.items()})
            count += 1
    return count


def _write_parquet(path: Path, rows: Iterable[dict[str, Any]], fields: dict[str, str]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
             "time": pa.timestamp("us", tz="UTC")}
    schema = pa.schema([(name, types[kind]) for name, kind in fields.items()])
    count = 0
    batch: list[dict[str, Any]] = []
    with pq.ParquetWriter(path, schema) as writer:
        for row in rows:
            batch.append(row)
            if len(batch) >= _PARQUET_BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count += len(batch)
                batch.clear()
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return count + len(batch)


def _write(path: Path, rows: Iterable[dict[str, Any]], fields: dict[str, str], file_format: str) -> int:
    if file_format == "jsonl":
        return _write_jsonl(path, rows)
    if file_format == "csv":
        return _write_csv(path, rows, fields)
    return _write_parquet(path, rows, fields)


def write_labels(
    session: Session, out: Path, *, file_format: str = "jsonl", with_history: bool = False
) -> dict[str, int]:
    """`labels.{file_format}` and, `with_history`, `label_history.{file_format}`; returns {file: rows}."""
    if file_format not in FILE_FORMATS:
        raise ValueError(f"unknown file format {file_format!r} for labels; choose one of {', '.join(FILE_FORMATS)}")
    out.mkdir(parents=True, exist_ok=True)
    name = f"labels.{file_format}"
    counts = {name: _write(out / name, iter_query(session, labels_query()), LABEL_FIELDS, file_format)}
    if with_history:
        history = f"label_history.{file_format}"
        counts[history] = _write(out / history, _history_rows(session), HISTORY_FIELDS, file_format)
    return counts
