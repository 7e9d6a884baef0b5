"""Telling a live run from a dead one, as the app sees them: a run whose process is gone stays `queued` or
`running` in the database, so its status alone cannot be trusted."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from annotator.models import Run, utcnow
from annotator.vocabulary import ACTIVE_RUN_STATUSES, RunKind, RunStatus

# A running run writes its counters every second or so; one silent this long has died (killed, crashed).
STALE_AFTER = timedelta(seconds=60)
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


def _age(moment: datetime | None, now: datetime) -> timedelta:
    if moment is None:
        return timedelta(0)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return now - moment


def stale_reason(run: Run, *, now: datetime | None = None) -> str | None:
    """Why a run that says it is queued or running cannot be (its process is gone), or None.

    A running run is stale once it has not written its counters for `STALE_AFTER`. A queued run is stale
    when the process started for it has exited (it died before it began), or when it has stayed queued
    for `START_TIMEOUT` (its process never started, or never got as far as claiming it).
    """
    now = now or utcnow()
    if run.status == RunStatus.running:
        if _age(run.heartbeat_at or run.started_at or run.created_at, now) > STALE_AFTER:
            return f"no sign of life for over {STALE_AFTER.seconds} s"
        return None
    if run.status != RunStatus.queued:
        return None
    if run.pid is not None and not process_alive(run.pid):
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
    """The newest runs first, of one kind or of all."""
    query = select(Run).order_by(Run.id.desc()).limit(limit)  # type: ignore[union-attr]
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
        "by": run.created_by,
        "started": run.started_at,
        "finished": run.finished_at,
    }
