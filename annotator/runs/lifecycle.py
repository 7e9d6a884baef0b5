"""A run's life in the database: created queued, claimed by its process, cancelled on request, and marked
failed by an admin when its process is gone.

Runs cost money, so one set of settings has at most one queued or running run: `create_run` refuses a second
(a double click, a second admin, the CLI beside the page). The check and the insert happen under a lock every
creator takes (SQLite: the write lock, taken at once; PostgreSQL: a transaction-scoped advisory lock), so two
concurrent creates with the same settings give exactly one run. A run whose process is gone (stale, or its pid
no longer alive on this machine) blocks nothing: it spends no more money.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sqlalchemy import false, select, text, update
from sqlmodel import Session

from annotator.models import Run, utcnow
from annotator.runs.health import is_stale, process_alive, stale_reason
from annotator.vocabulary import ACTIVE_RUN_STATUSES, RunKind, RunStatus


class RunError(ValueError):
    """A run cannot start: unknown run, bad options, nothing to do."""


class DuplicateRunError(RunError):
    """A run with the same kind and settings is queued or running (`run_id`): a second would pay twice."""

    def __init__(self, message: str, *, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id


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
    """A queued run; nothing happens until a process claims it (`claim_run`).

    Raises RunError naming the run if one with the same kind and settings is queued or running.
    """
    _lock_run_creation(session)
    settings = _settings_key(steps, prompt_version, models, options)
    for active in session.scalars(select(Run).where(Run.kind == kind, Run.status.in_(ACTIVE_RUN_STATUSES))):
        same = _settings_key(active.steps, active.prompt_version, active.models, active.options) == settings
        if same and _at_work(active):
            raise DuplicateRunError(
                f"run {active.id} with the same settings is already {active.status}"
                + (f" (started by {active.created_by})" if active.created_by else "")
                + "; wait for it to finish or cancel it before starting another",
                run_id=active.id or 0,
            )
    run = Run(
        kind=kind, status=RunStatus.queued, steps=steps, prompt_version=prompt_version, models=models,
        options=options, created_by=created_by,
    )
    session.add(run)
    session.flush()
    return run


# Any constant: the advisory lock's name among this database's advisory locks.
_CREATE_LOCK = 0x52554E53  # "RUNS"


def _lock_run_creation(session: Session) -> None:
    """Serialise run creation until the caller's transaction ends."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CREATE_LOCK})
    else:
        # A write that changes nothing takes SQLite's write lock now (a no-op under `write_session`, whose
        # BEGIN IMMEDIATE holds it already): the check below then sees every run committed before it.
        session.execute(update(Run).where(false()).values(status=Run.status))


def _at_work(run: Run) -> bool:
    """Not stale, and its process (if it has one yet) is alive: a run killed a moment ago blocks nothing.

    The pid is looked up on this machine (a run does not record its host): a run claimed by a process on
    another machine blocks only while a process with its pid exists here.
    """
    return not is_stale(run) and (run.pid is None or process_alive(run.pid))


def _settings_key(steps: str, prompt_version: str, models: Any, options: Any) -> str:
    """What makes two runs the same work: everything they were asked, as canonical JSON."""
    return json.dumps([steps, prompt_version, models, options], sort_keys=True, default=str)


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
