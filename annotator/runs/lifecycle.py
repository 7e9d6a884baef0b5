"""A run's life in the database: created queued, claimed by a worker (or its own process), taken over by another
worker when its heartbeat stops, cancelled on request, and marked failed by an admin when nobody takes it.

Runs cost money, so one set of settings has at most one queued or running run: `create_run` refuses a second
(a double click, a second admin, the CLI beside the page). The check and the insert happen under a lock every
creator takes (SQLite: the write lock, taken at once; PostgreSQL: a transaction-scoped advisory lock), so two
concurrent creates with the same settings give exactly one run. A stale run (see `health.stale_reason`: its
process has ended) spends no more money: the same settings resume it (`ResumableRunError`, `resume_run`) rather than
pay again for a run beside it.

Who holds a run is its `worker`, "host:pid:id" (`worker_id`, one per process: `holders`), written when it is claimed.
Queued runs, and running ones whose holder has ended (on this machine) or whose heartbeat is older than the timeout,
are claimed by `claim_next`: on PostgreSQL with
`FOR UPDATE SKIP LOCKED`, so two workers never claim the same run and neither waits for the other; on SQLite under
the write lock every `write_session` takes at once.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import and_, false, func, or_, select, text, update
from sqlmodel import Session

from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import ACTIVE_RUN_STATUSES, RunKind, RunStatus
from annotator.runs.health import ended_here, is_stale, stale_after, stale_reason
from annotator.runs.holders import holder_id
from annotator.runs.parts import cancel_job, fail_job, roll_up, roll_up_parents


class RunError(ValueError):
    """A run cannot start: unknown run, bad options, nothing to do."""


class DuplicateRunError(RunError):
    """A run with the same kind and settings is queued or running (`run_id`): a second would pay twice."""

    def __init__(self, message: str, *, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id


class ResumableRunError(DuplicateRunError):
    """A run with the same kind and settings is unfinished and its process has ended (`run`, stale): it is resumed
    (`resume_run`) rather than paid for again in a run beside it."""

    def __init__(self, run: Run) -> None:
        super().__init__(f"run {run.id} with the same settings is unfinished ({stale_reason(run)}); its command "
                         "resumes it", run_id=run.id or 0)
        self.run = run


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

    Raises DuplicateRunError naming the run if one with the same kind and settings is queued or running. One that is
    stale (its process has ended) is not done twice: ResumableRunError names it, for the caller to resume it
    (`resume_run`: `RunKindSpec.queue` does); a stale one asked to stop ends cancelled, and stale ones older than
    the one resumed are superseded (failed).
    """
    _lock_run_creation(session)
    settings = _settings_key(steps, prompt_version, models, options)
    stale: list[Run] = []
    query = (select(Run).where(Run.kind == kind, Run.status.in_(ACTIVE_RUN_STATUSES), Run.parent_id.is_(None))
             .order_by(Run.id))
    for active in session.scalars(query):
        if _settings_key(active.steps, active.prompt_version, active.models, active.options) != settings:
            continue
        if _at_work(active):
            raise _duplicate(active)
        stale.append(active)
    resumable = [old for old in stale if not _end_if_asked_to_stop(session, old)]
    if resumable:
        for old in resumable[:-1]:
            _supersede(session, old, by=resumable[-1])
        raise ResumableRunError(resumable[-1])
    run = Run(
        kind=kind, status=RunStatus.queued, steps=steps, prompt_version=prompt_version, models=models,
        options=options, created_by=created_by,
    )
    session.add(run)
    session.flush()
    return run


def resume_run(session: Session, run: Run) -> int:
    """Put stale run `run` (`ResumableRunError.run`, read in this transaction) back in the queue with its progress: no
    holder, no heartbeat, no process, its parts that were running queued too (a job); whoever claims it next resumes
    it, and what was answered comes from the call cache. Raises DuplicateRunError if a worker has taken it over
    since it was read. Returns its id."""
    assert run.id is not None
    waiting = {"status": RunStatus.queued, "worker": None, "heartbeat_at": None, "pid": None,
               "message": f"resumed ({stale_reason(run)})"}
    if run.parts:
        _lock_unchanged_job(session, run)
        session.execute(update(Run).where(Run.parent_id == run.id, Run.status == RunStatus.running).values(**waiting)
                        .execution_options(synchronize_session=False))
        roll_up(session, run.id)
        session.execute(update(Run).where(Run.id == run.id).values(message=waiting["message"], pid=None)
                        .execution_options(synchronize_session=False))
        return run.id
    if not _unchanged(session, run, **waiting):
        session.expire(run)
        raise _duplicate(session.get(Run, run.id) or run)
    return run.id


def _unchanged(session: Session, old: Run, **values: Any) -> bool:
    """Write `values` to run `old` unless a worker has taken it over since it was read (its status, holder or
    heartbeat moved); whether it was written."""
    return bool(session.execute(
        update(Run).where(Run.id == old.id, Run.status == old.status, Run.worker.is_not_distinct_from(old.worker),
                          Run.heartbeat_at.is_not_distinct_from(old.heartbeat_at))
        .values(**values).execution_options(synchronize_session=False)
    ).rowcount)


def _end_if_asked_to_stop(session: Session, old: Run) -> bool:
    """A stale run someone asked to stop is not resumed: it ends cancelled (a job: with its parts)."""
    if not old.cancel_requested:
        return False
    if old.parts:
        cancel_job(session, job_id=old.id or 0)
    elif not _unchanged(session, old, status=RunStatus.cancelled, finished_at=utcnow(), message=_GONE):
        session.expire(old)
        raise _duplicate(session.get(Run, old.id) or old)
    return True


_GONE = "cancelled on request (its worker had gone)"


def _duplicate(active: Run) -> DuplicateRunError:
    return DuplicateRunError(
        f"run {active.id} with the same settings is already {active.status}"
        + (f" (started by {active.created_by})" if active.created_by else "")
        + "; wait for it to finish or cancel it before starting another",
        run_id=active.id or 0,
    )


def _supersede(session: Session, old: Run, *, by: Run) -> None:
    """Fail stale run `old` in favour of `by`, unless a worker has taken it over since it was read (its holder or
    heartbeat moved): then it is at work, and `by` is refused as its duplicate."""
    message = f"{stale_reason(old)}; superseded by run {by.id}"
    if old.parts:
        _lock_unchanged_job(session, old)
        fail_job(session, job_id=old.id or 0, message=message)
        return
    if not _unchanged(session, old, status=RunStatus.failed, cancel_requested=True, finished_at=utcnow(),
                      message=message):
        session.expire(old)
        raise _duplicate(session.get(Run, old.id) or old)


def _lock_unchanged_job(session: Session, old: Run) -> None:
    """Lock job `old`'s parts (a part before its job, as everywhere), then read the job again; raise
    DuplicateRunError if one of its parts was taken by a worker since it was read (it is at work)."""
    session.execute(select(Run.id).where(Run.parent_id == old.id).with_for_update())
    fresh = session.execute(select(Run.status, Run.worker, Run.heartbeat_at).where(Run.id == old.id)).one()
    if tuple(fresh) != (old.status, old.worker, old.heartbeat_at):
        session.expire(old)
        raise _duplicate(session.get(Run, old.id) or old)


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
    """Not stale: a running run whose heartbeat is fresh, wherever its worker is, or a queued one waiting."""
    return not is_stale(run)


def _settings_key(steps: str, prompt_version: str, models: Any, options: Any) -> str:
    """What makes two runs the same work: everything they were asked, as canonical JSON."""
    return json.dumps([steps, prompt_version, models, options], sort_keys=True, default=str)


# Set when this process is asked to stop (a worker's SIGTERM): its run takes no more items, finishes the requests in
# flight and is handed back, queued, for another worker to take at once (`hand_back`).
_HANDING_BACK = threading.Event()


def hand_back() -> None:
    """Stop this process's run after the requests in flight and give it back to the queue, unfinished: no holder,
    no heartbeat, so another worker takes it at once instead of after the heartbeat timeout (`execution.run_to_end`,
    `RunProgress.finish`)."""
    _HANDING_BACK.set()


def handing_back() -> bool:
    return _HANDING_BACK.is_set()


def worker_id() -> str:
    """This process's name on the runs it holds: "host:pid:id" (a pid alone repeats across machines and restarts;
    the id is the process's start time and its machine's boot and pid namespace where /proc tells them:
    `holders.holder_id`)."""
    return holder_id()


def _take(run: Run, now: datetime) -> None:
    run.status, run.worker, run.claimed_at, run.heartbeat_at = RunStatus.running, worker_id(), now, now
    run.pid, run.started_at = os.getpid(), run.started_at or now


def claim_run(session: Session, *, run_id: int, kind: RunKind) -> Run:
    """Mark queued run `run_id` as running in this process, or take it over when it is running but stale (its
    process has ended, and nobody asked it to stop), or take it as it is when this process's worker has claimed it
    already (`claim_next`); raises RunError otherwise."""
    run = session.get(Run, run_id, with_for_update=True)
    if run is None or run.kind != kind:
        raise RunError(f"no {kind} run {run_id}")
    if run.parts:
        raise RunError(f"run {run_id} is a job of {run.parts} parts: its kind's command or workers execute them")
    if run.status == RunStatus.running and run.worker == worker_id():
        return run
    taken_over = run.status == RunStatus.running and not run.cancel_requested and is_stale(run)
    if run.status != RunStatus.queued and not taken_over:
        raise RunError(f"run {run_id} is {run.status}; only a queued run can be started")
    _take(run, utcnow())
    if run.parent_id is not None:
        roll_up(session, run.parent_id)
    return run


def claim_next(session: Session, *, kinds: Iterable[str], run_id: int | None = None) -> tuple[Run, str | None] | None:
    """Claim the oldest run of `kinds` (or run `run_id`, or a part of job `run_id`) that is queued, or running with a
    holder that has ended on this machine or a heartbeat older than `stale_after()` (its worker died: it is taken
    over); returns it with the worker it was taken from, or None. A job is never claimed itself, only its parts
    (`parts`).

    PostgreSQL skips rows another worker has locked (`FOR UPDATE SKIP LOCKED`); SQLite's write lock, which the
    caller's `write_session` holds, lets one claim at a time.
    """
    now = utcnow()
    # Its worker died: silent too long, or (on this machine) its process has ended.
    dead = func.coalesce(Run.heartbeat_at, Run.started_at, Run.created_at) < now - stale_after()
    if ended := ended_here(session):
        dead = or_(dead, Run.worker.in_(ended))
    query = (
        select(Run)
        .where(Run.parts == 0, Run.kind.in_(list(kinds)),
               Run.cancel_requested.is_(False) | (Run.status == RunStatus.queued),
               or_(Run.status == RunStatus.queued, and_(Run.status == RunStatus.running, dead)))
        .order_by(Run.id).limit(1)  # type: ignore[arg-type]
    )
    if run_id is not None:
        query = query.where(or_(Run.id == run_id, Run.parent_id == run_id))
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    _end_abandoned_cancels(session, dead)
    run = session.scalars(query).first()
    if run is None:
        return None
    previous = run.worker if run.status == RunStatus.running else None
    _take(run, now)
    if run.parent_id is not None:
        roll_up(session, run.parent_id)
    return run, previous


def _end_abandoned_cancels(session: Session, dead: Any) -> None:
    """A run asked to stop whose worker died before it could is not taken over: it ends cancelled (a part: its job is
    rolled up)."""
    abandoned = (Run.status == RunStatus.running, Run.cancel_requested.is_(True), dead, Run.parts == 0)
    jobs = list(session.scalars(select(Run.parent_id).where(*abandoned, Run.parent_id.is_not(None))))
    session.execute(
        update(Run).where(*abandoned).values(status=RunStatus.cancelled, finished_at=utcnow(), message=_GONE)
    )
    roll_up_parents(session, jobs)


def request_cancel(session: Session, *, run_id: int) -> bool:
    """Ask a queued or running run to stop; its worker, on whatever machine, reads the request with its next
    heartbeat, finishes its open transaction and marks the run cancelled. A queued run that no process was
    started for ends cancelled at once (no worker may ever come for it), and so does a stale one (its process has
    ended: nobody would read the request). A job's cancel reaches every part."""
    if _is_job(session, run_id):
        return cancel_job(session, job_id=run_id)
    run = session.get(Run, run_id, with_for_update=True)
    if run is not None and is_stale(run):
        run.status, run.cancel_requested, run.finished_at = RunStatus.cancelled, True, utcnow()
        run.message = _GONE if run.worker else "cancelled on request before it started"
        roll_up_parents(session, [run.parent_id])
        return True
    waiting = session.execute(
        update(Run).where(Run.id == run_id, Run.status == RunStatus.queued, Run.pid.is_(None))
        .values(status=RunStatus.cancelled, cancel_requested=True, finished_at=utcnow(),
                message="cancelled on request before it started")
    )
    if waiting.rowcount:
        roll_up_parents(session, [_job_of(session, run_id)])  # a part cancelled on its own
        return True
    result = session.execute(
        update(Run).where(Run.id == run_id, Run.status.in_(ACTIVE_RUN_STATUSES)).values(cancel_requested=True)
    )
    return bool(result.rowcount)


def fail_stale(session: Session, *, run_id: int, by: str | None = None) -> bool:
    """Mark a stale run (see `stale_reason`) failed; returns False if it is not stale (any more).

    It is also asked to stop, in case its process was only slow and comes back. A job fails with its parts.
    """
    if _is_job(session, run_id):
        job = session.get(Run, run_id)
        reason = stale_reason(job) if job is not None else None
        if reason is not None:
            fail_job(session, job_id=run_id, message=f"{reason}; marked failed" + (f" by {by}" if by else ""))
        return reason is not None
    run = session.get(Run, run_id, with_for_update=True)
    reason = stale_reason(run) if run is not None else None
    if run is None or reason is None:
        return False
    run.status, run.finished_at, run.cancel_requested = RunStatus.failed, utcnow(), True
    run.message = f"{reason}; marked failed" + (f" by {by}" if by else "")
    roll_up_parents(session, [run.parent_id])
    return True


def _job_of(session: Session, run_id: int) -> int | None:
    """The job run `run_id` is a part of, or None."""
    return session.execute(select(Run.parent_id).where(Run.id == run_id)).scalar()


def _is_job(session: Session, run_id: int) -> bool:
    """Whether `run_id` is a job of parts (read without a lock: a job's parts are locked before it)."""
    return bool(session.execute(select(Run.parts).where(Run.id == run_id)).scalar())
