"""Project settings: `python -m annotator settings [--labels-per-candidate N] [--gold-every N]
[--adaptive-overlap | --no-adaptive-overlap] [--adaptive-threshold P] [--adaptive-max-labels N]`."""

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
    adaptive_overlap: Annotated[
        bool | None,
        typer.Option("--adaptive-overlap/--no-adaptive-overlap",
                     help="Adaptive overlap: another label only while the posterior of the labels' majority is below "
                          "--adaptive-threshold (off: labels_per_candidate labels each)."),
    ] = None,
    adaptive_threshold: Annotated[
        float | None,
        typer.Option(help="With adaptive overlap: the posterior that settles a candidate.",
                     **bounded(limits.ADAPTIVE_THRESHOLD)),
    ] = None,
    adaptive_max_labels: Annotated[
        int | None,
        typer.Option(help="With adaptive overlap: the most labels a candidate gets.",
                     **bounded(limits.ADAPTIVE_MAX_LABELS)),
    ] = None,
) -> None:
    """Show the project settings, or change the ones given (changing adaptive overlap refits the annotators'
    accuracies)."""
    from annotator.database import queries
    from annotator.database.engine import get_engine, read_session, write_session
    from annotator.labelling import adaptive, gold, queue  # imported when used: `--help` stays fast

    engine = get_engine()
    try:
        with write_session(engine) as session:
            if labels_per_candidate is not None:
                queue.set_labels_per_candidate(session, value=labels_per_candidate)
            if gold_every is not None:
                gold.set_gold_every(session, value=gold_every)
            if (adaptive_overlap, adaptive_threshold, adaptive_max_labels) != (None, None, None):
                adaptive.set_overlap(session, adaptive=adaptive_overlap, threshold=adaptive_threshold,
                                     max_labels=adaptive_max_labels)
    except ValueError as exc:
        fail(str(exc), 2)
    with read_session(engine) as session:
        setting = adaptive.overlap(session)
        shown = {
            queue.LABELS_PER_CANDIDATE: (queue.labels_per_candidate(session), limits.LABELS_PER_CANDIDATE),
            gold.GOLD_EVERY: (gold.gold_every(session), limits.GOLD_EVERY),
            adaptive.ADAPTIVE_OVERLAP: ("on" if setting.adaptive else "off", None),
            adaptive.ADAPTIVE_THRESHOLD: (setting.threshold, limits.ADAPTIVE_THRESHOLD),
            adaptive.ADAPTIVE_MAX_LABELS: (setting.max_labels, limits.ADAPTIVE_MAX_LABELS),
        }
        for key, (value, allowed) in shown.items():
            problem = allowed and queries.setting_problem(session, key=key, allowed=allowed)
            typer.echo(f"{key} = {value}" + (f" ({problem}: this value is used until it is set again)"
                                             if problem else ""))
        typer.echo(f"overlap: {adaptive.describe(setting, queue.labels_per_candidate(session))}")
