"""Telling a live run from a dead one, as the app sees them: a run whose process is gone stays `queued` or
`running` in the database, so its status alone cannot be trusted.

A running run whose holder ran on this machine is dead as soon as that process has ended (`holders.ended`: its pid
and start time). Elsewhere its worker's pid means nothing here, and the heartbeat decides: a run silent for
`stale_after()` (`ANNOTATOR_HEARTBEAT_TIMEOUT` seconds, default 60) has lost its worker. A dead run is taken over by a
worker (`lifecycle.claim_next`) or resumed by its command. A queued run that the app started a process for on its own
machine (`pid`) is watched by that process id, until the process claims it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Run, Worker, utcnow
from annotator.database.vocabulary import ACTIVE_RUN_STATUSES, RunKind, RunStatus
from annotator.runs.holders import ended, here_suffix
from annotator.settings import limits

# A running run's worker beats every few seconds (`workers.Heartbeat`, and with its counters every second); one
# silent this long has died (killed, crashed, its machine gone). `ANNOTATOR_HEARTBEAT_TIMEOUT` sets another.
STALE_AFTER = timedelta(seconds=60)
HEARTBEAT_TIMEOUT_ENV = "ANNOTATOR_HEARTBEAT_TIMEOUT"
# A queued run's process claims it within seconds of starting; one still queued after this never started.
START_TIMEOUT = timedelta(seconds=60)


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists on this machine and has not exited (a zombie counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc (not Linux): kill() said it exists
        return True
    return state not in ("Z", "X")


def stale_after(*, strict: bool = False) -> timedelta:
    """How long a running run may be silent before it counts as dead: `ANNOTATOR_HEARTBEAT_TIMEOUT` seconds (every
    worker and app server of a database should see the same value), else `STALE_AFTER`. A value that is not a
    number in `limits.HEARTBEAT_TIMEOUT` raises RangeError naming the variable when `strict` (a worker and the
    `runs` command check it so as they start), and otherwise reads as the default, so that it cannot break a page."""
    try:
        return _heartbeat_timeout()
    except limits.RangeError:
        if strict:
            raise
        return STALE_AFTER


def _heartbeat_timeout() -> timedelta:
    value = os.environ.get(HEARTBEAT_TIMEOUT_ENV, "").strip()
    if not value:
        return STALE_AFTER
    try:
        seconds = float(value)
    except ValueError:
        seconds = value  # type: ignore[assignment]  (refused by the range check, naming it)
    return timedelta(seconds=limits.HEARTBEAT_TIMEOUT.check(seconds))


def heartbeat_age(run: Run, *, now: datetime | None = None) -> timedelta | None:
    """How long ago a queued or running run last showed a sign of life (None for a run never claimed)."""
    moment = run.heartbeat_at or run.started_at
    return None if moment is None else _age(moment, now or utcnow())


def _age(moment: datetime | None, now: datetime) -> timedelta:
    if moment is None:
        return timedelta(0)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return now - moment


def stale_reason(run: Run, *, now: datetime | None = None) -> str | None:
    """Why a run that says it is queued or running cannot be (its process is gone), or None.

    A running run is stale once its holder, a process of this machine, has ended, or once its heartbeat is older
    than `stale_after()`, wherever its worker runs. A queued run that the app started a process for (`pid`) is
    stale when that process has exited (it died before it began), or when it has stayed queued for `START_TIMEOUT`
    (it never got as far as claiming it); a queued run without one waits for a worker and is never stale.
    """
    now = now or utcnow()
    if run.status == RunStatus.running:
        if pids := ended(run.worker):
            several = len(pids) > 1
            return f"its process{'es' if several else ''} {', '.join(map(str, pids))} on this machine " + (
                "have ended" if several else "has ended")
        timeout = stale_after()
        if _age(run.heartbeat_at or run.started_at or run.created_at, now) > timeout:
            return f"no sign of life for over {timeout.total_seconds():g} s"
        return None
    if run.status != RunStatus.queued or run.pid is None:
        return None
    if not process_alive(run.pid):
        return "its process exited before it began"
    if _age(run.created_at, now) > START_TIMEOUT:
        return f"not started after {START_TIMEOUT.seconds} s"
    return None


def is_stale(run: Run, *, now: datetime | None = None) -> bool:
    """A run that says it is queued or running but whose process is gone (see `stale_reason`)."""
    return stale_reason(run, now=now) is not None


def is_active(run: Run) -> bool:
    """Queued or running, and not stale."""
    return run.status in ACTIVE_RUN_STATUSES and not is_stale(run)


def recent_runs(session: Session, *, kind: RunKind | None = None, limit: int = 20) -> list[Run]:
    """The newest runs first, of one kind or of all; a job of parts is one run (its parts are in it)."""
    query = select(Run).where(Run.parent_id.is_(None)).order_by(Run.id.desc()).limit(limit)  # type: ignore[union-attr]
    if kind is not None:
        query = query.where(Run.kind == kind)
    return list(session.execute(query).scalars())


# The runs table's column names say what they count (the same names on Generate and Evaluate).
REQUESTS_SENT = "requests sent"
FROM_CACHE = "answered from cache"
RETRIES = "retries (in requests sent)"
FAILED = "items failed"
UNREADABLE = "answers unreadable"
TOKENS = "tokens in / out"


def describe(run: Run, *, items: str = "problems") -> dict[str, Any]:
    """What every run shows in a runs table, as plain values (a key is never stored, only its variable's name).

    `items` names what the run works through: its column is "`items` done / total".
    """
    reason = stale_reason(run)
    return {
        "run": run.id,
        "status": f"stale ({reason})" if reason else run.status,
        f"{items} done / total": f"{run.problems_done} / {run.problems_total}",
        REQUESTS_SENT: run.requests,
        FROM_CACHE: run.cache_hits,
        RETRIES: run.retries,
        FAILED: run.failures,
        UNREADABLE: run.unparseable,
        TOKENS: f"{run.prompt_tokens} / {run.completion_tokens}",
        "prompts": run.prompt_version,
        "worker": run.worker,
        "by": run.created_by,
        "started": run.started_at,
        "finished": run.finished_at,
    }


def ended_here(session: Session) -> list[str]:
    """The holders of running runs that ran on this machine and have ended (`holders.ended`)."""
    suffix = here_suffix()
    if suffix is None:
        return []
    names = session.scalars(select(Run.worker).where(Run.status == RunStatus.running, Run.parts == 0,
                                                     Run.worker.endswith(suffix, autoescape=True)).distinct())
    return [name for name in names if ended(name)]


def serving(session: Session, *, kind: str) -> list[str]:
    """The live workers (a fresh heartbeat, and a process that has not ended) that take runs of `kind`."""
    return [worker.id for worker in live_workers(session) if kind in worker.kinds.split(",")]


def live_workers(session: Session) -> list[Worker]:
    """Every worker with a fresh heartbeat whose process has not ended (`holders.ended`), oldest first."""
    query = select(Worker).where(Worker.heartbeat_at > utcnow() - stale_after()).order_by(Worker.started_at)
    return [worker for worker in session.scalars(query) if not ended(worker.id)]
