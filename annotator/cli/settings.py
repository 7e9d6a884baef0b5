"""Project settings: `python -m annotator settings [--labels-per-candidate N] [--imported-labels-count |
--no-imported-labels-count] [--gold-every N] [--adaptive-overlap | --no-adaptive-overlap] [--adaptive-threshold P]
[--adaptive-max-labels N]`."""

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
    imported_labels_count: Annotated[
        bool | None,
        typer.Option("--imported-labels-count/--no-imported-labels-count",
                     help="Whether labels that came with an import (e.g. the release's own import:reliablemath) fill "
                          "labels_per_candidate; off, every candidate gets that many labels from the team's people.",
                     show_default=False),
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
            if imported_labels_count is not None:
                queue.set_imported_labels_count(session, value=imported_labels_count)
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
            if key == queue.LABELS_PER_CANDIDATE:  # shown where k is: what a complete candidate has
                counts = queue.imported_labels_count(session)
                typer.echo(f"{queue.IMPORTED_LABELS_COUNT} = {str(counts).lower()} (a complete candidate has "
                           f"{queue.labels_wanted(value, count_imported=counts)})")
        typer.echo(f"overlap: {adaptive.describe(setting, queue.labels_per_candidate(session))}")
