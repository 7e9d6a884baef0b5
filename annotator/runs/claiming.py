"""Claiming runs for this process: the next run of some kinds (`claim`), a run whose execution broke failed at once
(`fail_if_held`), and a kind's `execute` that runs a job's parts one after another in this process (`splittable`).

Apart from `workers` (whose loop loads the kinds' modules) so that a kind's module may use `splittable` without an
import cycle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import RunStatus
from annotator.runs.lifecycle import claim_next, worker_id
from annotator.runs.parts import part_number, roll_up_parents


@dataclass(frozen=True)
class Claimed:
    run_id: int
    kind: str
    taken_from: str | None  # the dead worker it was taken over from
    job_id: int | None = None  # a part's job
    part: str = ""  # "part 2 of 4 of run 10"


def claim(engine: Engine, *, kinds: Sequence[str], run_id: int | None = None) -> Claimed | None:
    """Claim the next run for this worker (`lifecycle.claim_next`), committed at once."""
    with write_session(engine) as session:
        claimed = claim_next(session, kinds=kinds, run_id=run_id)
        if claimed is None:
            return None
        run, previous = claimed
        assert run.id is not None
        if run.parent_id is None:
            return Claimed(run.id, run.kind, previous)
        number, count = part_number(session, run)
        return Claimed(run.id, run.kind, previous, run.parent_id, f"part {number} of {count} of run {run.parent_id}")


def fail_if_held(engine: Engine, run_id: int, message: str) -> None:
    """A run whose execution broke before it could write its outcome is failed, not left to be taken over again."""
    with write_session(engine) as session:
        failed = session.execute(update(Run).where(Run.id == run_id, Run.worker == worker_id(),
                                                   Run.status == RunStatus.running)
                                 .values(status=RunStatus.failed, message=message[:2000], finished_at=utcnow()))
        if failed.rowcount:  # a part's job is the sum of its parts
            roll_up_parents(session, [session.execute(select(Run.parent_id).where(Run.id == run_id)).scalar()])


Execute = Callable[..., Awaitable[Any]]


def splittable(execute_one: Execute, *, summary_of: Callable[[Run], Any]) -> Execute:
    """A kind's `execute` whose runs may be jobs of parts: `execute_one(engine, *, run_id, progress_callback, ...)`
    executes a run (a part among them); a job is executed by claiming its parts in this process one after another
    (those no live worker holds) and executing each, and its summary is `summary_of(job)`, the sum of its parts."""

    async def execute(engine: Engine, *, run_id: int, progress_callback: Callable[..., None] | None = None,
                      **options: Any) -> Any:
        with read_session(engine) as session:
            job = session.get(Run, run_id)
            kind = job.kind if job is not None and job.parts else None
        if kind is None:
            return await execute_one(engine, run_id=run_id, progress_callback=progress_callback, **options)
        while (claimed := await asyncio.to_thread(claim, engine, kinds=[kind], run_id=run_id)) is not None:
            try:
                await execute_one(engine, run_id=claimed.run_id, **options,
                                  progress_callback=_job_progress(engine, claimed, progress_callback))
            except BaseException as exc:
                fail_if_held(engine, claimed.run_id, f"{type(exc).__name__}: {exc}")
                raise
        with read_session(engine) as session:
            return summary_of(session.get(Run, run_id))

    return execute


def _job_progress(engine: Engine, part: Claimed, callback: Callable[..., None] | None) -> Callable[..., None] | None:
    """A part's progress callback that tells the job's: the other parts' done and total added."""
    if callback is None:
        return None
    with read_session(engine) as session:
        job = session.get(Run, part.job_id)
        mine = session.get(Run, part.run_id)
        assert job is not None and mine is not None
        done, total = job.problems_done - mine.problems_done, job.problems_total - mine.problems_total
    return lambda part_done, part_total, *rest: callback(done + part_done, total + part_total, *rest)
