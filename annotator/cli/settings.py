"""Project settings: `python -m annotator settings [--labels-per-candidate N] [--gold-every N]`."""

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
    gold_every: Annotated[
        int | None,
        typer.Option(help="At most one gold item in this many items per annotator (0: no gold items in queues)."),
    ] = None,
) -> None:
    """Show the project settings, or change the ones given."""
    from annotator import gold, queue  # imported when used: `--help` stays fast
    from annotator.db import get_engine, read_session, write_session

    engine = get_engine()
    try:
        with write_session(engine) as session:
            if labels_per_candidate is not None:
                queue.set_labels_per_candidate(session, value=labels_per_candidate)
            if gold_every is not None:
                gold.set_gold_every(session, value=gold_every)
    except ValueError as exc:
        fail(str(exc), 2)
    with read_session(engine) as session:
        typer.echo(f"labels_per_candidate = {queue.labels_per_candidate(session)}")
        typer.echo(f"gold_every = {gold.gold_every(session)}")
