"""A run's life in the database: created queued, claimed by its process, cancelled on request, and marked
failed by an admin when its process is gone."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import update
from sqlmodel import Session

from annotator.models import Run, utcnow
from annotator.runs.health import stale_reason
from annotator.vocabulary import ACTIVE_RUN_STATUSES, RunKind, RunStatus


class RunError(ValueError):
    """A run cannot start: unknown run, bad options, nothing to do."""


def create_run(
    session: Session,
    *,
    kind: RunKind,
    prompt_version: str,
    models: dict[str, Any],
    options: dict[str, Any],
    steps: str,
    created_by: str | None = None,
) -> Run:
    """A queued run; nothing happens until a process claims it (`claim_run`)."""
    run = Run(
        kind=kind, status=RunStatus.queued, steps=steps, prompt_version=prompt_version, models=models,
        options=options, created_by=created_by,
    )
    session.add(run)
    session.flush()
    return run


def claim_run(session: Session, *, run_id: int, kind: RunKind) -> Run:
    """Mark queued run `run_id` as running in this process; raises RunError if it is not queued."""
    run = session.get(Run, run_id)
    if run is None or run.kind != kind:
        raise RunError(f"no {kind} run {run_id}")
    if run.status != RunStatus.queued:
        raise RunError(f"run {run_id} is {run.status}; only a queued run can be started")
    now = utcnow()
    run.status, run.pid, run.started_at, run.heartbeat_at = RunStatus.running, os.getpid(), now, now
    return run


def request_cancel(session: Session, *, run_id: int) -> bool:
    """Ask a queued or running run to stop; it finishes its open transaction and marks itself cancelled."""
    result = session.execute(
        update(Run).where(Run.id == run_id, Run.status.in_(ACTIVE_RUN_STATUSES)).values(cancel_requested=True)
    )
    return bool(result.rowcount)


def fail_stale(session: Session, *, run_id: int, by: str | None = None) -> bool:
    """Mark a stale run (see `stale_reason`) failed; returns False if it is not stale (any more).

    It is also asked to stop, in case its process was only slow and comes back.
    """
    run = session.get(Run, run_id, with_for_update=True)
    reason = stale_reason(run) if run is not None else None
    if run is None or reason is None:
        return False
    run.status, run.finished_at, run.cancel_requested = RunStatus.failed, utcnow(), True
    run.message = f"{reason}; marked failed" + (f" by {by}" if by else "")
    return True
