"""Exports: each format writes files into a directory; every export adds a `manifest.json` beside them.

`EXPORTS` is the one list of export formats: each names its writer, the options it takes, the function that
adds its own manifest entries (the release's `vetted` rule, label provenance), what it is, and any other names
it answers to. A writer's module has the writer `(session, out, **options) -> {file name: records}`, fed by the
query functions of `annotator.database.queries` (JSONL / CSV / Parquet files through
`annotator.import_export.exports.rows`), and `nothing_to_write(session)`: why it would write no record, or None. Exports
hold dataset content and labels only: no annotator passwords, API keys or settings. Importing this package loads no
writer (nor the database layer), so that the command line can list the formats at once; `export` loads the one it runs.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotator import __version__
from annotator._util.extras import INSPECT, Extra, MissingExtra
from annotator._util.files import sha256_file

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlmodel import Session

Exporter = Callable[..., dict[str, int]]  # (session, out, **options): writes files, returns {file name: records}


@dataclass(frozen=True)
class Export:
    """An export format: its name (what `export --format` takes and the page's download says), its writer as
    `module:function`, what it writes, the options the writer takes as keyword arguments, the function of the
    module that adds entries of its own to the manifest (`(session, **options) -> dict`), if any, the other
    names it answers to, and the extra its writer needs, if any."""

    name: str
    writer: str
    description: str
    options: tuple[str, ...] = ()
    manifest: str | None = None
    aliases: tuple[str, ...] = ()
    extra: Extra | None = None

    @property
    def module(self) -> str:
        return self.writer.split(":")[0]

    def function(self, name: str) -> Callable[..., Any]:
        """A function of the writer's module, loaded now."""
        function: Callable[..., Any] = getattr(importlib.import_module(self.module), name)
        return function

    def missing_extra(self) -> MissingExtra | None:
        """The error to show when the extra its writer needs is not installed, else None (looked up, not loaded)."""
        return self.extra.missing("writing") if self.extra is not None and not self.extra.installed() else None

    def write(self, session: Session, out: Path, **options: Any) -> dict[str, int]:
        counts: dict[str, int] = self.function(self.writer.split(":")[1])(session, out, **options)
        return counts

    def manifest_entries(self, session: Session, **options: Any) -> dict[str, Any]:
        return self.function(self.manifest)(session, **options) if self.manifest else {}

    def nothing_to_write(self, session: Session) -> str | None:
        reason: str | None = self.function("nothing_to_write")(session)
        return reason


EXPORTS: tuple[Export, ...] = (
    Export("reliablemath", "annotator.import_export.exports.reliablemath:write_release",
           "the release layout (solve / unsol files), only vetted candidates",
           options=("include_incomplete",), manifest="manifest"),
    Export("hf", "annotator.import_export.exports.hf:write_dataset",
           "the release as a Hugging Face dataset: Parquet configs per data source and a dataset card",
           options=("include_incomplete",), manifest="manifest", aliases=("huggingface",)),
    Export("annotation", "annotator.import_export.exports.annotation:write_sheet",
           "the paper's annotation sheet (Fig. 10), every candidate", manifest="manifest"),
    Export("jsonl", "annotator.import_export.exports.table:write_jsonl",
           "candidates.jsonl: a flat table, one row per candidate"),
    Export("csv", "annotator.import_export.exports.table:write_csv",
           "candidates.csv: a flat table, one row per candidate"),
    Export("parquet", "annotator.import_export.exports.table:write_parquet",
           "candidates.parquet: a flat table, one row per candidate"),
    Export("treecut", "annotator.import_export.exports.treecut:write_files",
           "each imported TreeCut file under its own name, byte for byte"),
    Export("umwp", "annotator.import_export.exports.umwp:write_files", "each imported UMWP file under its own name"),
    Export("gsm_ic", "annotator.import_export.exports.gsm_ic:write_files",
           "each imported GSM-IC file under its own name, and the vetted distractors", aliases=("gsm-ic",)),
    Export("labels", "annotator.import_export.exports.labels:write_labels",
           "every annotator's every label (JSONL, CSV or Parquet), optionally their history",
           options=("file_format", "with_history")),
    Export("audit", "annotator.import_export.exports.audit:write_audit",
           "the audit sample with each reviewer's decision (JSONL, CSV or Parquet); the estimate in the manifest",
           options=("file_format",), manifest="manifest"),
    Export("transcripts", "annotator.import_export.exports.transcripts:write_transcripts",
           "every model response with its judge and human verdicts"),
    Export("inspect", "annotator.import_export.exports.inspect_log:write_inspect_logs",
           "the transcripts as Inspect AI eval logs (.json), one per model and prompt", aliases=("inspect_log",),
           extra=INSPECT),
)


class UnknownExportFormat(ValueError):
    """An export format that no writer has, or an option its writer does not take."""


def find(name: str) -> Export:
    """The export called `name` or answering to it; raises UnknownExportFormat naming the choices."""
    found = next((spec for spec in EXPORTS if name == spec.name or name in spec.aliases), None)
    if found is None:
        raise UnknownExportFormat(
            f"unknown export format {name!r}; choose one of {', '.join(spec.name for spec in EXPORTS)}"
        )
    return found


def export(
    format: str, out: Path, *, engine: Engine | None = None, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Write `format` into `out` and a manifest (counts, sha256 of each file, export time, tool version, the
    options given).

    Raises UnknownExportFormat before touching the database or `out` when no export has `format` (a name or
    an alias), or it takes none of `options` (its `Export.options`), and MissingExtra when its writer's extra is
    not installed.
    """
    spec = find(format)
    if missing := spec.missing_extra():
        raise missing
    options = options or {}
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        raise UnknownExportFormat(f"the {spec.name} export takes no option {', '.join(unknown)}")
    from annotator.database.engine import get_engine, read_session

    out.mkdir(parents=True, exist_ok=True)
    with read_session(engine or get_engine()) as session:
        counts = spec.write(session, out, **options)
        entries = spec.manifest_entries(session, **options)
    manifest = {
        "tool": "annotator",
        "version": __version__,
        "format": spec.name,
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
    A few indexed counts, one rule per format in its writer's module (tests check each against what its writer
    writes)."""
    return find(format).nothing_to_write(session)


__all__ = ["EXPORTS", "Export", "Exporter", "UnknownExportFormat", "export", "find", "nothing_to_write"]
