"""Database and dataset commands: init, import, export, stats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from annotator import stats as stats_module
from annotator.cli._app import app, fail
from annotator.db import PROJECT_ROOT, current_revision, database_url, get_engine, read_session
from annotator.exports import EXPORTERS, export
from annotator.formats import ReadOptions, read
from annotator.formats.table import parse_mapping
from annotator.importer import import_parts


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@app.command()
def init() -> None:
    """Create the database, or upgrade it to the newest schema."""
    engine = get_engine()
    typer.echo(f"database {_redacted(database_url())} at revision {', '.join(current_revision(engine))}")


@app.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or a ReliableMath release directory.")],
    format: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", help="reliablemath, check, annotation, table (jsonl/csv/parquet); detected if omitted."
        ),
    ] = None,
    mapping: Annotated[
        str | None,
        typer.Option("--map", help="Column mapping for flat tables: field=column,... e.g. question=problem."),
    ] = None,
    annotator: Annotated[
        str | None, typer.Option(help="Whose labels a labelled sheet holds (default: a pseudo-annotator per file).")
    ] = None,
    data_source: Annotated[str | None, typer.Option(help="Data source for rows that do not name one.")] = None,
    update: Annotated[
        bool, typer.Option("--update", help="Replace records whose id exists with different content.")
    ] = False,
) -> None:
    """Import problems, candidates and labels in one transaction: on any error nothing is imported."""
    try:
        options = ReadOptions(mapping=parse_mapping(mapping), annotator=annotator, data_source=data_source)
    except ValueError as exc:
        fail(str(exc), 2)
    parts = [part for path in paths for part in read(path, format=format, options=options)]
    summary = import_parts(parts, engine=get_engine(), update=update)
    typer.echo(
        f"imported {len(summary.files)} file(s): {summary.problems_added} problems and {summary.candidates_added} "
        f"candidates added, {summary.problems_updated + summary.candidates_updated} updated, "
        f"{summary.labels_added} labels added, {summary.labels_updated} changed, {summary.unchanged} unchanged"
    )


@app.command("export")
def export_command(
    format: Annotated[str, typer.Option("--format", "-f", help=f"One of: {', '.join(EXPORTERS)}.")] = "reliablemath",
    out: Annotated[Path | None, typer.Option(help="Output directory (default: exports/FORMAT).")] = None,
) -> None:
    """Write the dataset; `reliablemath` keeps only candidates whose label is human_check = 1."""
    if format not in EXPORTERS:
        fail(f"unknown export format {format!r}; choose one of {', '.join(EXPORTERS)}", 2)
    target = out or PROJECT_ROOT / "exports" / format
    manifest = export(format, target, engine=get_engine())
    for name, entry in manifest["files"].items():
        typer.echo(f"{target / name}: {entry['records']} records")


@app.command()
def stats(as_json: Annotated[bool, typer.Option("--json", help="Print JSON (deterministic).")] = False) -> None:
    """Per data source: candidates by rewrite type and difficulty, checked versus kept (paper Tables 2, 10, 11)."""
    with read_session(get_engine()) as session:
        result = stats_module.compute(session)
    typer.echo(stats_module.to_json(result) if as_json else stats_module.to_text(result))
