"""Database and dataset commands: init, import, export, stats.

Nothing heavy is imported at start-up (no database layer, reader, writer or statistics): each command
imports what it needs, so that `--help` and the other commands start at once. The format lists in the help
come from the registries, which load no reader or writer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from annotator.cli._app import app, fail, out_directory
from annotator.import_export import exports
from annotator.import_export.formats import FORMATS as IMPORT_FORMATS


def import_format_help() -> str:
    """The `import --format` help: every registered format with its description, in detection order, and the
    other names it takes."""
    formats = "; ".join(f"{fmt.name}: {fmt.description}" for fmt in IMPORT_FORMATS)
    aliases = ", ".join(f"{'/'.join(fmt.aliases)} for {fmt.name}" for fmt in IMPORT_FORMATS if fmt.aliases)
    return f"Detected if omitted. {formats}. Also: {aliases}."


def export_format_help() -> str:
    """The `export --format` help: every export with what it writes, and the other names it takes."""
    formats = "; ".join(f"{spec.name}: {spec.description}" for spec in exports.EXPORTS)
    aliases = ", ".join(f"{'/'.join(spec.aliases)} for {spec.name}" for spec in exports.EXPORTS if spec.aliases)
    return f"One of: {formats}." + (f" Also: {aliases}." if aliases else "")


# The flag that gives each writer option (`Export.options`) on the command line.
_EXPORT_FLAGS = {"file_format": "--as", "with_history": "--with-history", "include_incomplete": "--include-incomplete"}


def _refuse_options(spec: exports.Export, given: dict[str, object]) -> None:
    """Exit 2 naming the flag and the exports that take it when `spec` takes one of `given` not."""
    for name in given:
        if name not in spec.options:
            takers = [other.name for other in exports.EXPORTS if name in other.options]
            fail(f"{_EXPORT_FLAGS[name]} applies to --format {' or '.join(takers)} only", 2)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@app.command()
def init() -> None:
    """Create the database, or upgrade it to the newest schema."""
    from annotator.database.engine import current_revision, database_url, get_engine

    engine = get_engine()
    typer.echo(f"database {_redacted(database_url())} at revision {', '.join(current_revision(engine))}")


@app.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or a ReliableMath release directory.")],
    format: Annotated[str | None, typer.Option("--format", "-f", help=import_format_help())] = None,
    mapping: Annotated[
        str | None,
        typer.Option("--map", help="Column mapping for flat tables: field=column,... e.g. question=problem."),
    ] = None,
    annotator: Annotated[
        str | None, typer.Option(help="Whose labels a labelled sheet holds (default: a pseudo-annotator per file).")
    ] = None,
    data_source: Annotated[str | None, typer.Option(help="Data source for rows that do not name one.")] = None,
    model: Annotated[
        str | None, typer.Option(help="Transcripts from lm-eval or a Batch API file: the model to store them under.")
    ] = None,
    prompt: Annotated[
        str | None,
        typer.Option(help="Transcripts from lm-eval or a Batch API file: the prompt name (default: the lm-eval task, "
                     "or the custom_id's data_id/PROMPT)."),
    ] = None,
    id_field: Annotated[
        str | None, typer.Option(help="lm-eval samples: the doc's field holding our data_id (default data_id).")
    ] = None,
    id_map: Annotated[
        Path | None,
        typer.Option(help="lm-eval samples: a .csv / .jsonl file with columns doc_id, data_id (and optionally "
                     "task) naming each doc's item."),
    ] = None,
    update: Annotated[
        bool, typer.Option("--update", help="Replace records whose id exists with different content.")
    ] = False,
) -> None:
    """Import problems, candidates, labels and transcripts in one transaction: on any error nothing is imported;
    every bad file is named, one line each."""
    from annotator.database.engine import get_engine
    from annotator.import_export.formats import ReadOptions, read_all
    from annotator.import_export.formats.table import parse_mapping
    from annotator.import_export.importer import import_parts

    try:
        options = ReadOptions(mapping=parse_mapping(mapping), annotator=annotator, data_source=data_source,
                              model=model, prompt=prompt, id_field=id_field, id_map=id_map)
    except ValueError as exc:
        fail(str(exc), 2)
    # Every bad file is told (one line each), not only the first.
    summary = import_parts(read_all(paths, format=format, options=options), engine=get_engine(), update=update)
    typer.echo(summary.text())


def _nothing_to_write(format: str) -> str | None:
    from annotator.database.engine import get_engine, read_session

    with read_session(get_engine()) as session:
        return exports.nothing_to_write(session, format)


@app.command("export")
def export_command(
    format: Annotated[
        str, typer.Option("--format", "-f", help=export_format_help())
    ] = "reliablemath",
    out: Annotated[Path | None, typer.Option(help="Output directory (default: exports/FORMAT).")] = None,
    file_format: Annotated[
        str | None, typer.Option("--as", help="labels and audit only: jsonl (default), csv or parquet.")
    ] = None,
    with_history: Annotated[
        bool, typer.Option("--with-history", help="labels only: also every label event, in label_history.*")
    ] = False,
    include_incomplete: Annotated[
        bool,
        typer.Option("--include-incomplete", help="reliablemath and hf only: also the candidates whose fewer than "
                     "labels_per_candidate labels resolve to human_check = 1 (the manifest says so)."),
    ] = False,
) -> None:
    """Write the dataset; `reliablemath` keeps only vetted candidates (labels_per_candidate labels resolving to
    human_check = 1, or adjudicated so); `labels` writes every annotator's labels."""
    from annotator.database.engine import PROJECT_ROOT
    from annotator.import_export.exports.rows import FILE_FORMATS

    try:
        # The database is opened only once the format is known to have a writer.
        spec = exports.find(format)
    except exports.UnknownExportFormat as exc:
        fail(str(exc), 2)
    target = out_directory(out or PROJECT_ROOT / "exports" / spec.name)
    given = {"file_format": file_format, "with_history": with_history, "include_incomplete": include_incomplete}
    options = {name: value for name, value in given.items() if value}
    _refuse_options(spec, options)
    if file_format not in (None, *FILE_FORMATS):
        fail(f"--as takes {', '.join(FILE_FORMATS[:-1])} or {FILE_FORMATS[-1]}, got {file_format!r}", 2)
    if missing := spec.missing_extra():  # before the database is opened
        raise missing
    if reason := _nothing_to_write(spec.name):
        typer.echo(f"nothing to export: {reason}; nothing written")
        return
    manifest = exports.export(spec.name, target, options=options)
    for name, entry in manifest["files"].items():
        typer.echo(f"{target / name}: {entry['records']} records")
    if "audit" in manifest:
        from annotator.labelling.audit import describe

        typer.echo(f"audit: {describe(manifest['audit'])}")
    vetted = manifest.get("vetted") or {}
    if vetted.get("left_out"):
        from annotator.labelling.queue import labels_wanted

        target = labels_wanted(vetted["labels_per_candidate"], count_imported=vetted["imported_labels_count"])
        typer.echo(f"left out {vetted['left_out']} incomplete candidate(s): fewer than {target} and not "
                   "adjudicated; --include-incomplete puts them in")


@app.command()
def stats(as_json: Annotated[bool, typer.Option("--json", help="Print JSON (deterministic).")] = False) -> None:
    """Per data source: candidates by rewrite type and difficulty, checked versus vetted (paper Tables 2,
    10, 11)."""
    from annotator.database.engine import get_engine, read_session
    from annotator.figures import stats as stats_module

    with read_session(get_engine()) as session:
        result = stats_module.compute(session)
    typer.echo(stats_module.to_json(result) if as_json else stats_module.to_text(result))
