"""The body of every run's command (`generate`, `evaluate`, ...): create a run of the kind (or take `--run-id`
of a queued one), execute it in this process, print what it did; with `--queue`, create it and print its id
only, for a worker to take. A kind's command only parses its options.

Everything of a kind comes from its spec (`annotator.runs.kinds`), imported when the command runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from annotator.cli._app import fail
from annotator.cli._progress import progress_bar
from annotator.database.vocabulary import RunKind, RunStatus

ERRORS_SHOWN = 10  # a run's kept errors printed after its summary


def create_and_execute(
    kind: RunKind, *, run_id: int | None, options: Callable[[], Any], progress: bool, queue: bool = False
) -> None:
    """Execute run `run_id`, or a new run of `kind` with `options()` (its key variables checked before the run
    is created: `RunKindSpec.queue`; a run with the same settings whose process has ended is resumed instead, and
    said so); print its summary and its first errors. With `queue`, only create it and print its id. Exits 2 when
    the run cannot start, 1 when it did not succeed."""
    import asyncio

    from sqlalchemy import select

    from annotator.database.engine import get_engine, write_session
    from annotator.database.models import Run
    from annotator.runs import RunError
    from annotator.runs.kinds import spec
    from annotator.runs.llm import LLMConfigError
    from annotator.runs.workers import Heartbeat, heartbeat_every

    if queue and run_id is not None:
        fail("--queue creates a run; --run-id executes one that exists: give one of them", 2)
    engine = get_engine()
    try:
        kind_spec = spec(kind)
        if run_id is None:
            chosen = options()
            with write_session(engine) as session:
                run_id = kind_spec.queue(session, options=chosen, created_by="cli")
                started, message = session.execute(select(Run.started_at, Run.message).where(Run.id == run_id)).one()
                if started is not None and message:  # a run resumed, not a new one
                    typer.echo(f"run {run_id}: {message}", err=True)
        if queue:
            typer.echo(run_id)
            return
        # The run's heartbeat from its own thread, as a worker's: a slow step never makes it look dead.
        heart = Heartbeat(engine, kinds=None, every=heartbeat_every(), say=lambda line: typer.echo(line, err=True))
        heart.start()
        try:
            with progress_bar(kind_spec.unit, show=progress) as on_progress:
                summary = asyncio.run(kind_spec.execute(engine, run_id=run_id, progress_callback=on_progress))
        finally:
            heart.stop()
    except (RunError, LLMConfigError) as exc:
        fail(str(exc), 2)
    typer.echo(summary.text())
    for error in summary.errors[:ERRORS_SHOWN]:
        typer.echo(f"  {summary.error_line(error)}", err=True)
    if summary.status != RunStatus.succeeded:
        raise typer.Exit(1)
