"""Database and dataset commands: init, import, export, stats.

Nothing heavy is imported at start-up (no database layer, reader, writer or statistics): each command
imports what it needs, so that `--help` and the other commands start at once. The format lists in the help
come from the registries' import-free name lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from annotator import exports
from annotator.cli._app import app, fail, out_directory
from annotator.formats import names as format_names


def import_format_help() -> str:
    """The `import --format` help: every registered format with its description, in detection order, and the
    other names it takes."""
    formats = "; ".join(f"{name}: {description}" for name, description in format_names.FORMATS.items())
    by_format: dict[str, list[str]] = {}
    for alias, name in format_names.ALIASES.items():
        by_format.setdefault(name, []).append(alias)
    aliases = ", ".join(f"{'/'.join(names)} for {name}" for name, names in by_format.items())
    return f"Detected if omitted. {formats}. Also: {aliases}."


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@app.command()
def init() -> None:
    """Create the database, or upgrade it to the newest schema."""
    from annotator.db import current_revision, database_url, get_engine

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
    from annotator.db import get_engine
    from annotator.formats import ReadOptions, read_all
    from annotator.formats.table import parse_mapping
    from annotator.importer import import_parts

    try:
        options = ReadOptions(mapping=parse_mapping(mapping), annotator=annotator, data_source=data_source,
                              model=model, prompt=prompt, id_field=id_field, id_map=id_map)
    except ValueError as exc:
        fail(str(exc), 2)
    # Every bad file is told (one line each), not only the first.
    summary = import_parts(read_all(paths, format=format, options=options), engine=get_engine(), update=update)
    typer.echo(summary.text())


def _nothing_to_write(format: str) -> str | None:
    from annotator.db import get_engine, read_session

    with read_session(get_engine()) as session:
        return exports.nothing_to_write(session, format)


@app.command("export")
def export_command(
    format: Annotated[
        str, typer.Option("--format", "-f", help=f"One of: {', '.join(exports.FORMATS)}.")
    ] = "reliablemath",
    out: Annotated[Path | None, typer.Option(help="Output directory (default: exports/FORMAT).")] = None,
    file_format: Annotated[
        str | None, typer.Option("--as", help="labels only: jsonl (default), csv or parquet.")
    ] = None,
    with_history: Annotated[
        bool, typer.Option("--with-history", help="labels only: also every label event, in label_history.*")
    ] = False,
    include_incomplete: Annotated[
        bool,
        typer.Option("--include-incomplete", help="reliablemath only: also the candidates whose fewer than "
                     "labels_per_candidate labels resolve to human_check = 1 (the manifest says so)."),
    ] = False,
) -> None:
    """Write the dataset; `reliablemath` keeps only vetted candidates (labels_per_candidate labels resolving to
    human_check = 1, or adjudicated so); `labels` writes every annotator's labels."""
    from annotator.db import PROJECT_ROOT

    target = out_directory(out or PROJECT_ROOT / "exports" / format)
    options: dict[str, object] = {"file_format": file_format} if file_format else {}
    if with_history:
        options["with_history"] = True
    if options and format != "labels":
        fail("--as and --with-history apply to --format labels only", 2)
    if include_incomplete:
        if format != "reliablemath":
            fail("--include-incomplete applies to --format reliablemath only", 2)
        options["include_incomplete"] = True
    if file_format not in (None, "jsonl", "csv", "parquet"):
        fail(f"--as takes jsonl, csv or parquet, got {file_format!r}", 2)
    if format in exports.FORMATS and (reason := _nothing_to_write(format)):
        typer.echo(f"nothing to export: {reason}; nothing written")
        return
    try:
        # The database is opened only once the format is known to have a writer.
        manifest = exports.export(format, target, options=options)
    except exports.UnknownExportFormat as exc:
        fail(str(exc), 2)
    for name, entry in manifest["files"].items():
        typer.echo(f"{target / name}: {entry['records']} records")
    vetted = manifest.get("vetted") or {}
    if vetted.get("left_out"):
        target = vetted["labels_per_candidate"]
        typer.echo(f"left out {vetted['left_out']} incomplete candidate(s): fewer than {target} label(s) and not "
                   "adjudicated; --include-incomplete puts them in")


@app.command()
def stats(as_json: Annotated[bool, typer.Option("--json", help="Print JSON (deterministic).")] = False) -> None:
    """Per data source: candidates by rewrite type and difficulty, checked versus vetted (paper Tables 2,
    10, 11)."""
    from annotator import stats as stats_module
    from annotator.db import get_engine, read_session

    with read_session(get_engine()) as session:
        result = stats_module.compute(session)
    typer.echo(stats_module.to_json(result) if as_json else stats_module.to_text(result))
