"""Project settings: `python -m annotator settings [--labels-per-candidate N]`."""

from __future__ import annotations

from typing import Annotated

import typer

from annotator.cli._app import app, fail


@app.command()
def settings(
    labels_per_candidate: Annotated[
        int | None,
        typer.Option(help="How many annotators label each candidate; the queue never hands out more."),
    ] = None,
) -> None:
    """Show the project settings, or change the ones given."""
    from annotator import queue  # imported when used: `--help` stays fast
    from annotator.db import get_engine, read_session, write_session

    engine = get_engine()
    if labels_per_candidate is not None:
        try:
            with write_session(engine) as session:
                queue.set_labels_per_candidate(session, value=labels_per_candidate)
        except ValueError as exc:
            fail(str(exc), 2)
    with read_session(engine) as session:
        typer.echo(f"labels_per_candidate = {queue.labels_per_candidate(session)}")
