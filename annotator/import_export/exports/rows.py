"""The one table writer: rows to a JSONL, CSV or Parquet file, streamed (memory does not grow with the rows).

Every export that writes one of these goes through `write_table`: the flat candidate tables, the labels and
their history, the transcripts. The same rows give the same cells in each: times as ISO 8601 in JSONL and CSV
(timestamps in Parquet), booleans as JSON writes them in CSV, and CSV text a spreadsheet would run as a formula
with a `'` in front (`csv_cells.DictWriter`; JSONL and Parquet keep the exact text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from annotator._util.csv_cells import DictWriter

FILE_FORMATS = ("jsonl", "csv", "parquet")
KINDS = ("string", "int", "float", "bool", "time")
PARQUET_BATCH = 5000  # rows per Parquet row group
_JSONL_BUFFER = 20_000  # pieces of text gathered before a write


def write_table(
    path: Path,
    rows: Iterable[dict[str, Any]],
    *,
    file_format: str,
    columns: Mapping[str, str] | None = None,
    json_text: Sequence[str] = (),
) -> int:
    """Write `rows` to `path` as `file_format` (jsonl, csv or parquet); returns how many rows were written.

    Args:
        rows: one dict per row; the writer may change them.
        columns: each column's name and kind (one of `KINDS`), in order: the CSV header and the Parquet schema
            (required for both). JSONL writes each row's keys as they come; its `time` columns become ISO 8601.
        json_text: JSONL only: keys whose values are JSON text already (as the database stores them), written
            as they are after the row's other keys (null when None), rather than decoded and encoded again.
    """
    if file_format == "jsonl":
        return _write_jsonl(path, rows, columns or {}, json_text)
    if columns is None:
        raise ValueError(f"a {file_format} file needs its columns")
    if file_format == "csv":
        return _write_csv(path, rows, columns)
    if file_format == "parquet":
        return _write_parquet(path, rows, columns)
    raise ValueError(f"unknown file format {file_format!r}; choose one of {', '.join(FILE_FORMATS)}")


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _json_bool(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else value


def _converters(columns: Mapping[str, str], conversions: Mapping[str, Callable[[Any], Any]]) -> list[tuple[str, Any]]:
    """The columns whose cells need converting, each with its conversion (none for most tables: no cost)."""
    return [(name, conversions[kind]) for name, kind in columns.items() if kind in conversions]


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]], columns: Mapping[str, str],
                 json_text: Sequence[str]) -> int:
    convert = _converters(columns, {"time": _iso})
    encode = _object_encoder()
    count = 0
    pieces: list[str] = []
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            for name, function in convert:
                row[name] = function(row[name])
            if json_text:
                raw = [row.pop(name) for name in json_text]
                pieces.append(encode(row)[:-1])
                pieces.extend(f', "{name}": {value or "null"}' for name, value in zip(json_text, raw))
                pieces.append("}\n")
            else:
                pieces.append(encode(row) + "\n")
            count += 1
            if len(pieces) >= _JSONL_BUFFER:
                handle.writelines(pieces)
                pieces.clear()
        handle.writelines(pieces)
    return count


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _object_encoder() -> Callable[[dict[str, Any]], str]:
    """`json.dumps(obj, ensure_ascii=False)` for one object at a time, without its per-call set-up.

    `json.dumps` builds a new C encoder on every call, which costs more than encoding a short row; build
    it once (falling back to the public API where the C encoder is missing).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False).encode
    encoder = make(None, _not_json, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda obj: "".join(encoder(obj, 0))


def _write_csv(path: Path, rows: Iterable[dict[str, Any]], columns: Mapping[str, str]) -> int:
    convert = _converters(columns, {"time": _iso, "bool": _json_bool})
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        for row in rows:
            for name, function in convert:
                row[name] = function(row[name])
            writer.writerow(row)
            count += 1
    return count


def _write_parquet(path: Path, rows: Iterable[dict[str, Any]], columns: Mapping[str, str]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
             "time": pa.timestamp("us", tz="UTC")}
    schema = pa.schema([(name, types[kind]) for name, kind in columns.items()])
    count = 0
    batch: list[dict[str, Any]] = []
    with pq.ParquetWriter(path, schema) as writer:
        for row in rows:
            batch.append(row)
            count += 1
            if len(batch) >= PARQUET_BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch.clear()
        if batch or count == 0:  # an empty table still has its schema
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return count
