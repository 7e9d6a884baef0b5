"""Exports: each format writes files into a directory; every export adds a `manifest.json` beside them.

| format       | what                                                                          |
|--------------|-------------------------------------------------------------------------------|
| reliablemath | the release layout (solve / unsol files), only vetted candidates (`queue.vetted`) |
| annotation   | the paper's annotation sheet (Fig. 10), every candidate                        |
| jsonl, csv, parquet | flat tables, one row per candidate                                     |
| treecut, umwp, gsm-ic | each imported file of that format under its own name, byte for byte  |
| labels       | every annotator's every label (JSONL, CSV or Parquet), optionally their history  |
| transcripts  | `transcripts.jsonl`: every model response with its judge and human verdicts    |
| inspect      | the transcripts as Inspect AI eval logs (`.json`), one per model and prompt      |

One module per format; each writer takes a read session and a directory and returns {file name: records},
fed by the query functions of `annotator.store`. A writer's module may also have a `manifest(session,
**options)` returning entries of its own for the manifest (the release's `vetted` rule, label provenance).
Exports hold dataset content and labels only: no annotator passwords, API keys or settings. Importing this
package loads no writer (nor the database layer), so that the command line can list `FORMATS` at once;
`export` loads them.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotator import __version__
from annotator.files import sha256_file

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlmodel import Session

Exporter = Callable[["Session", Path], dict[str, int]]  # writes files, returns {file name: record count}
# Each format's writer as (module of this package, function), loaded only when an export runs, so that the
# command line can list the formats at once.
_WRITERS = {
    "reliablemath": ("reliablemath", "write_release"),
    "annotation": ("annotation", "write_sheet"),
    "jsonl": ("table", "write_jsonl"),
    "csv": ("table", "write_csv"),
    "parquet": ("table", "write_parquet"),
    "treecut": ("treecut", "write_files"),
    "umwp": ("umwp", "write_files"),
    "gsm-ic": ("gsm_ic", "write_files"),
    "labels": ("labels", "write_labels"),
    "transcripts": ("transcripts", "write_transcripts"),
    "inspect": ("inspect_log", "write_inspect_logs"),
}
FORMATS = tuple(_WRITERS)
# The options a format's writer takes as keyword arguments (`export(..., options=...)`).
OPTIONS = {"labels": ("file_format", "with_history"), "reliablemath": ("include_incomplete",)}


class UnknownExportFormat(ValueError):
    """An export format that no writer has."""


@cache
def exporters() -> dict[str, Exporter]:
    """Every export format's writer, by format name."""
    return {
        name: getattr(importlib.import_module(f"annotator.exports.{module}"), function)
        for name, (module, function) in _WRITERS.items()
    }


def _manifest_entries(format: str) -> Callable[..., dict[str, Any]] | None:
    """The `manifest(session, **options)` function of a format's writer module, if it has one."""
    return getattr(importlib.import_module(f"annotator.exports.{_WRITERS[format][0]}"), "manifest", None)


def export(
    format: str, out: Path, *, engine: Engine | None = None, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Write `format` into `out` and a manifest (counts, sha256 of each file, export time, tool version, the
    options given).

    Raises UnknownExportFormat before touching the database or `out` when no writer has `format`, or it
    takes none of `options` (see `OPTIONS`).
    """
    writer = exporters().get(format)
    if writer is None:
        raise UnknownExportFormat(f"unknown export format {format!r}; choose one of {', '.join(FORMATS)}")
    options = options or {}
    unknown = sorted(set(options) - set(OPTIONS.get(format, ())))
    if unknown:
        raise UnknownExportFormat(f"the {format} export takes no option {', '.join(unknown)}")
    from annotator.db import get_engine, read_session

    out.mkdir(parents=True, exist_ok=True)
    with read_session(engine or get_engine()) as session:
        counts = writer(session, out, **options)
        own = _manifest_entries(format)
        entries = own(session, **options) if own is not None else {}
    manifest = {
        "tool": "annotator",
        "version": __version__,
        "format": format,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **({"options": options} if options else {}),
        "files": {name: {"records": counts[name], "sha256": sha256_file(out / name)} for name in sorted(counts)},
    }
    manifest.update(entries)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def nothing_to_write(session: Session, format: str) -> str | None:
    """Why the `format` export would write no record (e.g. "no TreeCut files were imported"), or None: asked
    before writing, so that the Import and export page and the command line say "nothing to export" and why.
    A few indexed counts, one rule per format (tests check each against what its writer writes)."""
    from sqlalchemy import select

    from annotator.models import Annotation, Candidate, Problem, SourceFile, Transcript
    from annotator.queue import labels_per_candidate, vetted
    from annotator.vocabulary import SOLVABLE_BY_DESIGN

    def _any(query: Any) -> bool:
        return session.execute(query.limit(1)).first() is not None

    def _imported(format: str) -> bool:
        return _any(select(SourceFile.id).where(SourceFile.format == format))

    if format == "reliablemath":
        return None if _any(select(Problem.id)) else "the database holds no problems"
    if format in ("annotation", "jsonl", "csv", "parquet"):
        return None if _any(select(Candidate.id)) else "the database holds no candidates"
    if format == "labels":
        return None if _any(select(Annotation.id)) else "nobody has labelled a candidate yet"
    if format in ("transcripts", "inspect"):
        return None if _any(select(Transcript.id)) else "the database holds no transcripts"
    if format == "gsm-ic":
        distractors = select(Candidate.id).where(
            vetted(labels_per_candidate(session)), Candidate.rewrite_type.in_([str(t) for t in SOLVABLE_BY_DESIGN])
        )
        if _imported(format) or _any(distractors):
            return None
        return "no GSM-IC files were imported and no distractor is vetted yet"
    names = {"treecut": "TreeCut", "umwp": "UMWP"}
    return None if _imported(format) else f"no {names.get(format, format)} files were imported"


__all__ = ["FORMATS", "OPTIONS", "Exporter", "UnknownExportFormat", "export", "exporters", "nothing_to_write"]
