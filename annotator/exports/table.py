"""Flat tables of candidates: JSONL, CSV and Parquet, one row per candidate with its problem's fields.

CSV and Parquet cells cannot keep a JSON type, so they hold `ground_truth` and `source_id` as JSON text in
`{name}_json` columns (`annotator.formats.table.JSON_ENCODED`), which an import decodes again. CSV text
cells that a spreadsheet would run as a formula get a `'` in front (`annotator.csv_cells`; an import removes
it). Rows stream from the database: memory does not grow with the number of candidates.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Text, type_coerce
from sqlmodel import Session

from annotator.csv_cells import DictWriter
from annotator.formats.table import JSON_ENCODED
from annotator.store import CANDIDATE_COLUMNS, candidates_query, iter_candidates, iter_raw

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


def write_jsonl(session: Session, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    encode = _object_encoder()
    pieces: list[str] = []
    with (out / "candidates.jsonl").open("w", encoding="utf-8") as handle:
        for row in iter_raw(session, candidates_query(columns=_JSONL_SELECT, order="id")):
            # JSON-typed columns are stored as JSON text: splice them in rather than decode and re-encode.
            raw = [row.pop(name) for name in _RAW_JSON]
            pieces.append(encode(row)[:-1])
            pieces.extend(f', "{name}": {value or "null"}' for name, value in zip(_RAW_JSON, raw))
            pieces.append("}\n")
            count += 1
            if len(pieces) >= 20_000:
                handle.writelines(pieces)
                pieces.clear()
        handle.writelines(pieces)
    return {"candidates.jsonl": count}


def _object_encoder() -> Callable[[dict[str, Any]], str]:
    """`json.dumps(obj, ensure_ascii=False)` for one object at a time, without its per-call set-up.

    `json.dumps` builds a new C encoder on every call, which costs more than encoding a short row; build
    it once (falling back to the public API where the C encoder is missing).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False).encode
    encoder = make(None, None, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda obj: "".join(encoder(obj, 0))


def write_csv(session: Session, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with (out / "candidates.csv").open("w", encoding="utf-8", newline="") as handle:
        writer: DictWriter | None = None
        for candidate in iter_candidates(session, columns=FLAT_SELECT, order="id"):
            row = flat_row(candidate)
            if writer is None:
                writer = DictWriter(handle, fieldnames=list(row))
                writer.writeheader()
            writer.writerow(row)
            count += 1
    return {"candidates.csv": count}


def write_parquet(session: Session, out: Path) -> dict[str, int]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    count = 0
    writer: pq.ParquetWriter | None = None
    batch: list[dict[str, Any]] = []
    schema = None

    def write_batch() -> None:
        nonlocal writer, schema
        if writer is None:
            schema = _parquet_schema(pa)
            writer = pq.ParquetWriter(out / "candidates.parquet", schema)
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        batch.clear()

    for candidate in iter_candidates(session, columns=FLAT_SELECT, order="id"):
        batch.append(flat_row(candidate))
        count += 1
        if len(batch) >= 5000:
            write_batch()
    if batch or writer is None:
        write_batch()
    assert writer is not None
    writer.close()
    return {"candidates.parquet": count}


def _parquet_schema(pa: Any) -> Any:
    integer = {"problem_position", "condition_index", "label_count", "human_check", "difficulty_eval"}
    names = [c if c not in JSON_ENCODED else f"{c}_json" for c in FLAT_COLUMNS]
    return pa.schema([(name, pa.int64() if name in integer else pa.string()) for name in names])
