"""Workers: processes that claim runs from the database and execute them (`python -m annotator worker`).

A worker takes queued runs of its kinds, oldest first, and runs whose worker died: a running run whose process on
this machine has ended, or whose heartbeat is older than `health.stale_after()` (`lifecycle.claim_next`). It executes
a run with the kind's own `execute`, which finds it claimed by this process (`lifecycle.claim_run`) and resumes it:
items already kept are skipped and answered requests come from the call cache, so a takeover re-asks nothing that
was answered and stored.

A run whose holder ran on this machine is dead as soon as that process has ended (`holders`: its pid and start time);
elsewhere liveness is the heartbeat, so workers may run on any machine that reaches the database.
A `Heartbeat` thread writes the worker's row and its run's `heartbeat_at` every `heartbeat_every()` seconds,
whatever the run's event loop is doing; the run's counters carry a heartbeat too (`RunProgress.save`), and that
is how a cancel request reaches the run, wherever it runs. A worker that finds its run held by another (it was
silent too long) stops working on it (`RunProgress.save` returns True) and writes nothing more to it.

A big job is split into parts (`parts`), each a run that any worker claims: several workers take one job's parts at
once. A process asked to execute the job itself (`worker --run-id JOB`, the kind's command, `splittable`) claims its
parts one after another. A worker stopped with SIGTERM hands its run back (`execution.hand_back`).

A worker serving runs keeps a `Worker` row (not a `--once` worker, which takes one run and exits): the app queues a
run without starting a process of its own while a live worker serves its kind (`serving`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.exc import DBAPIError

from annotator.database.engine import write_session
from annotator.database.models import Run, Worker, utcnow
from annotator.database.vocabulary import RunStatus
from annotator.runs.claiming import Claimed, claim, fail_if_held
from annotator.runs.health import stale_after
from annotator.runs.lifecycle import RunError, worker_id

Say = Callable[[str], None]


def heartbeat_every() -> float:
    """Seconds between heartbeats: a quarter of the timeout (a beat or two may be late), at most 5 s."""
    return min(stale_after().total_seconds() / 4, 5.0)


class Heartbeat:
    """Beats for this worker (its `Worker` row when `kinds` is given) and for the runs it holds (and a part's job), on
    a thread of its own, every `every` seconds until `stop()`."""

    def __init__(self, engine: Engine, *, kinds: Sequence[str] | None, every: float, say: Say) -> None:
        self.engine, self.kinds, self.every, self.say = engine, kinds, every, say
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="annotator-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        if self.kinds is not None:
            with write_session(self.engine) as session:
                # Rows of workers silent for long are gone for good: nobody needs them.
                session.execute(delete(Worker).where(Worker.heartbeat_at < utcnow() - 10 * stale_after()))
                session.merge(Worker(id=worker_id(), kinds=",".join(self.kinds)))
        self._thread.start()
        return self

    def beat(self) -> None:
        now = utcnow()
        with write_session(self.engine) as session:
            if self.kinds is not None:
                session.execute(update(Worker).where(Worker.id == worker_id()).values(heartbeat_at=now))
            held = (Run.worker == worker_id(), Run.status == RunStatus.running)
            # The parts first, then their jobs: a part is locked before its job, everywhere.
            session.execute(update(Run).where(*held).values(heartbeat_at=now)
                            .execution_options(synchronize_session=False))
            jobs = select(Run.parent_id).where(*held, Run.parent_id.is_not(None)).scalar_subquery().correlate(None)
            session.execute(update(Run).where(Run.id.in_(jobs), Run.status == RunStatus.running)
                            .values(heartbeat_at=now).execution_options(synchronize_session=False))

    def _loop(self) -> None:
        while not self._stopped.wait(self.every):
            try:
                self.beat()
            except Exception as exc:  # noqa: BLE001  (a busy or unreachable database: try again next beat)
                self.say(f"heartbeat failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        if self.kinds is not None:
            with write_session(self.engine) as session:
                session.execute(delete(Worker).where(Worker.id == worker_id()))


def execute(engine: Engine, claimed: Claimed, *, say: Say, progress: Callable[[str], object]) -> RunStatus | None:
    """Execute a claimed run with its kind's `execute`; says its summary; returns its status (None: it broke)."""
    from annotator.runs.kinds import spec
    from annotator.runs.llm import LLMConfigError

    taken = f" (taken over from {claimed.taken_from})" if claimed.taken_from else ""
    what = f"{claimed.kind}, {claimed.part}" if claimed.part else claimed.kind
    say(f"run {claimed.run_id} ({what}) claimed by {worker_id()}{taken}")
    try:
        kind = spec(claimed.kind)
        summary = asyncio.run(kind.execute(engine, run_id=claimed.run_id, progress_callback=progress(kind.unit)))
    except (RunError, LLMConfigError) as exc:
        fail_if_held(engine, claimed.run_id, str(exc))
        say(f"run {claimed.run_id}: {exc}")
        return None
    except Exception as exc:
        fail_if_held(engine, claimed.run_id, f"{type(exc).__name__}: {exc}")
        raise
    say(summary.text())
    return summary.status


def serve(
    engine: Engine,
    *,
    kinds: Sequence[str],
    once: bool = False,
    run_id: int | None = None,
    poll_seconds: float = 2.0,
    say: Say = print,
    progress: Callable[[str], object] = lambda unit: None,
    stop: threading.Event | None = None,
) -> list[RunStatus | None]:
    """Claim and execute runs of `kinds` until `stop` is set (or, `once`, one run: `run_id` if given, and when
    `run_id` is a job, each of its parts that no live worker holds); an idle worker looks for work every
    `poll_seconds`. Returns how each run it executed ended.

    `progress(unit)` gives a run's progress callback. Raises RunError when `once` finds no run to take.
    """
    stop = stop or threading.Event()
    heart = Heartbeat(engine, kinds=None if once else kinds, every=heartbeat_every(), say=say).start()
    ended: list[RunStatus | None] = []
    try:
        while not stop.is_set():
            claimed = _claim_or_wait(engine, kinds=kinds, run_id=run_id, once=once, say=say)
            if claimed is None and once and ended:
                break  # the job's parts are all taken
            if claimed is None:
                if once:
                    what = f"run {run_id}" if run_id is not None else f"run of {', '.join(kinds)}"
                    raise RunError(f"no {what} to take: none is queued, or held by a worker that is alive")
                stop.wait(poll_seconds)
                continue
            ended.append(execute(engine, claimed, say=say, progress=progress))
            if once and (run_id is None or claimed.job_id != run_id):
                break
    finally:
        heart.stop()
    return ended


def _claim_or_wait(engine: Engine, *, kinds: Sequence[str], run_id: int | None, once: bool, say: Say) -> Claimed | None:
    try:
        return claim(engine, kinds=kinds, run_id=run_id)
    except DBAPIError as exc:
        if once:
            raise
        # The database is down or busy for a moment: a worker serving runs waits for it.
        say(f"cannot look for work: {str(exc.orig).strip().splitlines()[0][:200]}; trying again")
        return None
