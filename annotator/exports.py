"""Exports: each format writes files into a directory; every export adds a `manifest.json` beside them.

Exports hold dataset content and labels only: no annotator passwords, API keys or settings.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from annotator import __version__
from annotator.db import get_engine, read_session
from annotator.formats import reliablemath, table
from annotator.formats._io import sha256_file
from annotator.store import data_sources, iter_candidates, iter_problems, source_file_options

Exporter = Callable[[Session, Path], dict[str, int]]  # writes files, returns {file name: record count}


def export_reliablemath(session: Session, out: Path) -> dict[str, int]:
    """The release layout; only candidates whose resolved label is human_check = 1."""
    styles = source_file_options(session, format=reliablemath.FORMAT)
    counts: dict[str, int] = {}
    combined: dict[str, list[dict[str, Any]]] = {"solve": [], "unsol": []}
    for source in data_sources(session):
        per_source = {
            "solve": [reliablemath.solve_record(p) for p in iter_problems(session, data_source=source)],
            "unsol": [reliablemath.unsol_record(c) for c in iter_candidates(session, data_source=source, kept_only=True)],
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
    with (out / "candidates.jsonl").open("w", encoding="utf-8") as handle:
        dumps = json.JSONEncoder(ensure_ascii=False).encode
        for candidate in iter_candidates(session):
            handle.write(dumps(table.flat_row(candidate, json_encode=False)))
            handle.write("\n")
            count += 1
    return {"candidates.jsonl": count}


def export_csv(session: Session, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with (out / "candidates.csv").open("w", encoding="utf-8", newline="") as handle:
        writer: csv.DictWriter[str] | None = None
        for candidate in iter_candidates(session):
            row = table.flat_row(candidate, json_encode=True)
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

    for candidate in iter_candidates(session):
        batch.append(table.flat_row(candidate, json_encode=True))
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
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "files": {name: {"records": counts[name], "sha256": sha256_file(out / name)} for name in sorted(counts)},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest
