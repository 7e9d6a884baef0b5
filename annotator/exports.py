"""Exports: each format writes files into a directory; every export adds a `manifest.json` beside them.

Exports hold dataset content and labels only: no annotator passwords, API keys or settings.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Text, type_coerce
from sqlmodel import Session

from annotator import __version__
from annotator.db import get_engine, read_session
from annotator.formats import gsm_ic, reliablemath, table, treecut, umwp
from annotator.formats._io import sha256_file
from annotator.store import (
    CANDIDATE_COLUMNS,
    candidates_query,
    data_sources,
    iter_candidates,
    iter_problems,
    iter_raw,
    source_file_options,
)

# Only what flat rows hold: decoding unused JSON columns is a large share of an export's time.
_BY_KEY = {column.key: column for column in CANDIDATE_COLUMNS}
FLAT_SELECT = tuple(_BY_KEY[name] for name in table.FLAT_COLUMNS)  # rows come out as flat rows
_RAW_JSON = tuple(name for name in table.FLAT_COLUMNS if name in table.JSON_ENCODED)
_JSONL_SELECT = tuple(_BY_KEY[name] for name in table.FLAT_COLUMNS if name not in _RAW_JSON) + tuple(
    type_coerce(_BY_KEY[name], Text).label(name) for name in _RAW_JSON
)

Exporter = Callable[[Session, Path], dict[str, int]]  # writes files, returns {file name: record count}


def export_reliablemath(session: Session, out: Path) -> dict[str, int]:
    """The release layout; only candidates whose resolved label is human_check = 1."""
    styles = source_file_options(session, format=reliablemath.FORMAT)
    counts: dict[str, int] = {}
    combined: dict[str, list[dict[str, Any]]] = {"solve": [], "unsol": []}
    for source in data_sources(session):
        per_source = {
            "solve": [reliablemath.solve_record(p) for p in iter_problems(session, data_source=source)],
            "unsol": [
                reliablemath.unsol_record(c) for c in iter_candidates(session, data_source=source, kept_only=True)
            ],
        }
        for kind, records in per_source.items():
            name = f"{kind}/{source}.json"
            _write_json(out / name, records, styles.get(name, {}))
            counts[name] = len(records)
            combined[kind].extend(records)
    for kind, records in combined.items():
        _write_json(out / f"{kind}.json", records, styles.get(f"{kind}.json", {}))
        counts[f"{kind}.json"] = len(records)
    return counts


def _write_json(path: Path, records: list[dict[str, Any]], style: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(reliablemath.dumps(records, ensure_ascii=bool(style.get("ensure_ascii"))), encoding="utf-8")


def export_annotation(session: Session, out: Path) -> dict[str, int]:
    """The paper's annotation sheet (Fig. 10), every candidate with every field."""
    records = [reliablemath.sheet_record(c) for c in iter_candidates(session)]
    _write_json(out / "annotation.json", records, {})
    return {"annotation.json": len(records)}


def export_jsonl(session: Session, out: Path) -> dict[str, int]:
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


def export_csv(session: Session, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with (out / "candidates.csv").open("w", encoding="utf-8", newline="") as handle:
        writer: csv.DictWriter[str] | None = None
        for candidate in iter_candidates(session, columns=FLAT_SELECT, order="id"):
            row = table.flat_row(candidate)
            if writer is None:
                writer = csv.DictWriter(handle, fieldnames=list(row))
                writer.writeheader()
            writer.writerow(row)
            count += 1
    return {"candidates.csv": count}


def export_parquet(session: Session, out: Path) -> dict[str, int]:
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
        batch.append(table.flat_row(candidate))
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
    names = [c if c not in table.JSON_ENCODED else f"{c}_json" for c in table.FLAT_COLUMNS]
    return pa.schema([(name, pa.int64() if name in integer else pa.string()) for name in names])


EXPORTERS: dict[str, Exporter] = {
    "reliablemath": export_reliablemath,
    "annotation": export_annotation,
    "jsonl": export_jsonl,
    "csv": export_csv,
    "parquet": export_parquet,
    "treecut": treecut.write_files,
    "umwp": umwp.write_files,
    "gsm-ic": gsm_ic.write_files,
}


def export(format: str, out: Path, *, engine: Engine | None = None) -> dict[str, Any]:
    """Write `format` into `out` and a manifest (counts, sha256 of each file, export time, tool version)."""
    if format not in EXPORTERS:
        raise ValueError(f"unknown export format {format!r}; choose one of {', '.join(sorted(EXPORTERS))}")
    out.mkdir(parents=True, exist_ok=True)
    with read_session(engine or get_engine()) as session:
        counts = EXPORTERS[format](session, out)
    manifest = {
        "tool": "annotator",
        "version": __version__,
        "format": format,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": {name: {"records": counts[name], "sha256": sha256_file(out / name)} for name in sorted(counts)},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest
