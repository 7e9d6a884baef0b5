"""A job split into parts: a big run (a judge run over many transcripts) whose work is cut into parts that
several workers take at once.

A job is a `Run` row with `parts` > 0; each part is a run of its own kind (`parent_id` the job's id) with its share
of the work in its options (a judge part: its range of transcript ids). Workers claim, beat, take over and hand
back parts as they do any run (`lifecycle.claim_next` never claims a job itself, only its parts), so a part whose
worker died is taken over alone and resumes from the call cache. The job's row is the sum of its parts
(`roll_up`): its counters, its errors, its heartbeat (the freshest of theirs) and its status: running while a part
runs, queued while parts wait for a worker and none runs, and once every part has ended the worst of their ends
(failed, cancelled, partial, succeeded). Whoever changes a part rolls its job up in the same transaction, always
locking the part before the job (so two workers finishing the last parts at once cannot both miss the other's end,
and no two transactions wait on each other); a cancel or a mark of the job reaches every part (`cancel_job`,
`fail_job`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlmodel import Session

from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import ACTIVE_RUN_STATUSES, RunStatus
from annotator.runs.health import is_stale

MAX_STORED_ERRORS = 200  # a run's first errors kept (a job: its parts', in part order)

# The counters a job sums from its parts.
SUMMED = ("problems_total", "problems_done", "candidates_written", "candidates_filtered", "requests", "cache_hits",
          "retries", "failures", "unparseable", "prompt_tokens", "completion_tokens")
# How a job ends once its parts have: the first of these that one of its parts ended with.
_WORST_FIRST = (RunStatus.failed, RunStatus.cancelled, RunStatus.partial, RunStatus.succeeded)
_table = Run.__table__  # type: ignore[attr-defined]  (rows read as plain values: nothing stale from the session)


def add_parts(session: Session, job: Run, *, options: list[dict[str, Any]], totals: list[int]) -> list[Run]:
    """Split queued run `job` into parts, one per entry of `options` (each part's options; `totals` what each is
    expected to work through, until its worker counts it)."""
    job.parts, job.problems_total = len(options), sum(totals)
    parts = [
        Run(kind=job.kind, status=RunStatus.queued, steps=job.steps, prompt_version=job.prompt_version,
            models=job.models, options=part_options, created_by=job.created_by, parent_id=job.id,
            problems_total=total)
        for part_options, total in zip(options, totals, strict=True)
    ]
    session.add_all(parts)
    session.flush()
    return parts


def job_parts(session: Session, job_ids: Iterable[int]) -> dict[int, list[Any]]:
    """Each job's parts as rows (id order), for listings."""
    found: dict[int, list[Any]] = {}
    ids = list(job_ids)
    if ids:
        for row in session.execute(select(_table).where(_table.c.parent_id.in_(ids)).order_by(_table.c.id)):
            found.setdefault(row.parent_id, []).append(row)
    return found


def part_number(session: Session, part: Run) -> tuple[int, int]:
    """(which part, of how many) `part` is of its job."""
    ids = list(session.scalars(select(_table.c.id).where(_table.c.parent_id == part.parent_id)
                               .order_by(_table.c.id)))
    return ids.index(part.id) + 1, len(ids)


def job_status(statuses: list[str]) -> RunStatus:
    """A job's status from its parts'."""
    if RunStatus.running in statuses:
        return RunStatus.running
    if RunStatus.queued in statuses:
        return RunStatus.queued
    return next((s for s in _WORST_FIRST if s in statuses), RunStatus.succeeded)


def _summed(values: list[Any]) -> Any:
    """Numbers added up, dictionaries merged key by key (a kind's `counters`)."""
    dicts = [v for v in values if isinstance(v, dict)]
    if dicts:
        keys = dict.fromkeys(key for d in dicts for key in d)
        return {key: _summed([d[key] for d in dicts if key in d]) for key in keys}
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) if numbers else (values[0] if values else None)


def _latest(moments: list[datetime | None]) -> datetime | None:
    present = [m for m in moments if m is not None]
    return max(present) if present else None


def _ended_message(parts: list[Any], status: RunStatus) -> str | None:
    if status == RunStatus.cancelled:
        return "cancelled on request"
    broken = next((p for p in parts if p.status == RunStatus.failed), None)
    if status == RunStatus.failed and broken is not None:
        return f"part {parts.index(broken) + 1} of {len(parts)} (run {broken.id}): {broken.message}"[:2000]
    return None


def roll_up(session: Session, job_id: int) -> None:
    """Make job `job_id`'s row the sum of its parts' (see the module's docstring); the caller has changed a part in
    this transaction, and the job is locked after it."""
    session.flush()
    session.execute(select(_table.c.id).where(_table.c.id == job_id).with_for_update())
    parts = list(session.execute(select(_table).where(_table.c.parent_id == job_id).order_by(_table.c.id)))
    if not parts:
        return
    status = job_status([p.status for p in parts])
    workers = list(dict.fromkeys(p.worker for p in parts if p.worker))
    errors = [e for p in parts for e in (p.errors or [])][:MAX_STORED_ERRORS]
    values: dict[str, Any] = {name: sum(getattr(p, name) or 0 for p in parts) for name in SUMMED}
    values.update(
        status=status, counters=_summed([p.counters for p in parts if p.counters]) or None, errors=errors or None,
        worker=", ".join(workers)[:200] or None, heartbeat_at=_latest([p.heartbeat_at for p in parts]),
        claimed_at=_latest([p.claimed_at for p in parts]),
        started_at=min((p.started_at for p in parts if p.started_at is not None), default=None),
    )
    if any(p.started_at is not None for p in parts):
        values["pid"] = None  # a worker has it now: not the process the app started, which may take a part or none
    if status.active:
        values.update(finished_at=None)
    else:
        values.update(finished_at=_latest([p.finished_at for p in parts]), message=_ended_message(parts, status))
    session.execute(update(Run).where(Run.id == job_id).values(**values).execution_options(synchronize_session=False))


def cancel_job(session: Session, *, job_id: int) -> bool:
    """Ask job `job_id` to stop: its parts no worker holds end cancelled at once, and so do the running ones whose
    worker has died (`health.is_stale`); the others are asked (their workers read it with their next heartbeat).
    False when the job has ended."""
    now = utcnow()
    session.execute(
        update(Run).where(Run.parent_id == job_id, Run.status == RunStatus.queued)
        .values(status=RunStatus.cancelled, cancel_requested=True, finished_at=now,
                message="cancelled on request before it started").execution_options(synchronize_session=False))
    running = session.scalars(select(Run).where(Run.parent_id == job_id, Run.status == RunStatus.running)
                              .with_for_update().execution_options(populate_existing=True))
    for part in [part for part in running if is_stale(part)]:
        part.status, part.cancel_requested, part.finished_at = RunStatus.cancelled, True, now
        part.message = "cancelled on request (its worker had gone)"
    session.flush()
    session.execute(update(Run).where(Run.parent_id == job_id, Run.status.in_(ACTIVE_RUN_STATUSES))
                    .values(cancel_requested=True).execution_options(synchronize_session=False))
    asked = session.execute(update(Run).where(Run.id == job_id, Run.status.in_(ACTIVE_RUN_STATUSES))
                            .values(cancel_requested=True).execution_options(synchronize_session=False))
    if asked.rowcount:  # an ended job's parts have all ended: nothing to sum again
        roll_up(session, job_id)
    return bool(asked.rowcount)


def fail_job(session: Session, *, job_id: int, message: str) -> None:
    """End job `job_id` failed with `message`: its parts still queued or running fail with it (and are asked to stop,
    should a worker only have been slow)."""
    session.execute(
        update(Run).where(Run.parent_id == job_id, Run.status.in_(ACTIVE_RUN_STATUSES))
        .values(status=RunStatus.failed, cancel_requested=True, finished_at=utcnow(), message=message)
        .execution_options(synchronize_session=False))
    roll_up(session, job_id)
    session.execute(update(Run).where(Run.id == job_id).values(message=message, cancel_requested=True)
                    .execution_options(synchronize_session=False))


def roll_up_parents(session: Session, job_ids: Iterable[int | None]) -> None:
    """Roll up each of these jobs (in id order, so that two transactions lock them in the same order)."""
    for job_id in sorted({job_id for job_id in job_ids if job_id is not None}):
        roll_up(session, job_id)


def calls(run: Run) -> dict[str, int]:
    """A run's request counters as a `Summary`'s `calls` (a job's: the sum of its parts')."""
    return {"requests": run.requests, "retries": run.retries, "cache_hits": run.cache_hits,
            "prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens}


def seconds(run: Run) -> float:
    """From a run's start to its end (or now)."""
    start, end = run.started_at or run.created_at, run.finished_at or utcnow()
    if (start.tzinfo is None) != (end.tzinfo is None):
        start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    return max((end - start).total_seconds(), 0.0)
