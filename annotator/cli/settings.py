"""Project settings: `python -m annotator settings [--labels-per-candidate N] [--gold-every N]`."""

from __future__ import annotations

from typing import Annotated

import typer

from annotator.cli._app import app, bounded, fail
from annotator.settings import limits


@app.command()
def settings(
    labels_per_candidate: Annotated[
        int | None,
        typer.Option(help="How many annotators label each candidate; the queue never hands out more.",
                     **bounded(limits.LABELS_PER_CANDIDATE)),
    ] = None,
    gold_every: Annotated[
        int | None,
        typer.Option(help="At most one gold item in this many items per annotator (0: no gold items in queues).",
                     **bounded(limits.GOLD_EVERY)),
    ] = None,
) -> None:
    """Show the project settings, or change the ones given."""
    from annotator.database import queries
    from annotator.database.engine import get_engine, read_session, write_session
    from annotator.labelling import gold, queue  # imported when used: `--help` stays fast

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
        shown = {
            queue.LABELS_PER_CANDIDATE: (queue.labels_per_candidate(session), limits.LABELS_PER_CANDIDATE),
            gold.GOLD_EVERY: (gold.gold_every(session), limits.GOLD_EVERY),
        }
        for key, (value, allowed) in shown.items():
            problem = queries.setting_problem(session, key=key, allowed=allowed)
            typer.echo(f"{key} = {value}" + (f" ({problem}: this value is used until it is set again)"
                                             if problem else ""))
