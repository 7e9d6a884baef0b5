"""The audit sample with each reviewer's decision (`export --format audit`), and the estimate in the manifest.

`audit.{jsonl,csv,parquet}` (`file_format`): one row per sampled candidate in the sample's order: `data_id,
data_source, position, unsolvable` (1 truly unsolvable, 0 not, empty until audited), `comment, audited_by,
audited_at` and the sample's `sample, seed, drawn_by, drawn_at`. The manifest's `audit` is
`annotator.labelling.audit.estimate`: the share of vetted candidates truly unsolvable, its 95% Wilson interval and
the sample it rests on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator.import_export.exports.rows import FILE_FORMATS, write_table
from annotator.labelling.audit import current_sample, estimate, sample_rows

AUDIT_FIELDS = {
    "data_id": "string",
    "data_source": "string",
    "position": "int",
    "unsolvable": "int",
    "comment": "string",
    "audited_by": "string",
    "audited_at": "time",
    "sample": "int",
    "seed": "int",
    "drawn_by": "string",
    "drawn_at": "time",
}


def write_audit(session: Session, out: Path, *, file_format: str = "jsonl") -> dict[str, int]:
    """`audit.{file_format}`; returns {file: rows}."""
    if file_format not in FILE_FORMATS:
        raise ValueError(f"unknown file format {file_format!r} for the audit; choose one of {', '.join(FILE_FORMATS)}")
    out.mkdir(parents=True, exist_ok=True)
    name = f"audit.{file_format}"
    return {name: write_table(out / name, sample_rows(session), file_format=file_format, columns=AUDIT_FIELDS)}


def manifest(session: Session, *, file_format: str = "jsonl") -> dict[str, Any]:
    """The manifest's `audit`: the estimate and the sample it rests on (whatever the file format)."""
    return {"audit": estimate(session)}


def nothing_to_write(session: Session) -> str | None:
    """Why the audit export would hold no row, or None."""
    return None if current_sample(session) is not None else "no audit sample is drawn (audit draw)"
