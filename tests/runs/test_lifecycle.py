"""Creating runs: one queued or running run per kind and settings, even when two creates race; a dead one with the
same settings is resumed."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs import RunError

MODELS = {"extract": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "KEY"}}


def _create(session: Session, *, kind: RunKind = RunKind.generate, limit: int = 5, by: str = "ann") -> Run:
    return runs.create_run(session, kind=kind, prompt_version="v1", models=MODELS, options={"limit": limit},
                           steps="1,2", created_by=by)


def _count(engine: Engine) -> int:
    with read_session(engine) as session:
        return session.scalar(select(func.count()).select_from(Run)) or 0


def test_a_second_run_with_the_same_settings_is_refused_while_the_first_is_active(engine: Engine) -> None:
    with write_session(engine) as session:
        first = _create(session).id
    with pytest.raises(RunError) as refused, write_session(engine) as session:
        _create(session, by="bob")
    assert str(refused.value) == (f"run {first} with the same settings is already queued (started by ann); wait for it "
                                  "to finish or cancel it before starting another")
    assert _count(engine) == 1
    with write_session(engine) as session:  # other settings, or another kind, are other work
        _create(session, limit=6)
        _create(session, kind=RunKind.evaluate)
    with write_session(engine) as session:
        session.get(Run, first).status = RunStatus.running
    with pytest.raises(RunError, match="already running"), write_session(engine) as session:
        _create(session)
    with write_session(engine) as session:
        session.get(Run, first).status = RunStatus.cancelled
    with write_session(engine) as session:  # once it has ended, the same settings may run again
        again = _create(session).id
    assert again != first and _count(engine) == 4


@contextmanager
def _deferred(engine: Engine) -> Iterator[Session]:
    """A plain transaction: on SQLite a deferred BEGIN, which takes no lock until it writes."""
    with Session(engine, expire_on_commit=False) as session, session.begin():
        yield session


def test_a_run_blocks_while_its_heartbeat_is_fresh_whatever_its_pid(engine: Engine) -> None:
    """A run held elsewhere is alive while its heartbeat is fresh, whatever its pid (another machine's); once the
    heartbeat is older than the timeout, the same settings resume it rather than start a second run beside it."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    with write_session(engine) as session:
        fresh = _create(session)
        fresh.status, fresh.pid, fresh.heartbeat_at = RunStatus.running, process.pid, utcnow()
        fresh.worker, fresh.started_at, fresh.problems_done, fresh.requests = "elsewhere:1:x", utcnow(), 3, 7
    with pytest.raises(RunError, match=f"run {fresh.id} with the same settings is already running"):
        with write_session(engine) as session:
            _create(session)
    with write_session(engine) as session:
        session.get(Run, fresh.id).heartbeat_at = utcnow() - runs.STALE_AFTER - timedelta(seconds=1)
    with pytest.raises(runs.ResumableRunError) as unfinished, write_session(engine) as session:
        _create(session)  # rolled back: who creates runs directly is told, and nothing changes
    assert str(unfinished.value) == (f"run {fresh.id} with the same settings is unfinished (no sign of life for over "
                                     "60 s); its command resumes it")
    with write_session(engine) as session:
        try:
            _create(session)
        except runs.ResumableRunError as again:
            assert runs.resume_run(session, again.run) == fresh.id
    assert _count(engine) == 1
    with read_session(engine) as session:  # queued again for whoever claims it next, with what it had done
        old = session.get(Run, fresh.id)
        assert (old.status, old.worker, old.heartbeat_at, old.pid, old.problems_done, old.requests) == (
            RunStatus.queued, None, None, None, 3, 7)
        assert old.message == "resumed (no sign of life for over 60 s)" and old.started_at is not None
    with pytest.raises(RunError, match=f"run {fresh.id} with the same settings is already queued"):
        with write_session(engine) as session:
            _create(session)


def test_a_stale_run_asked_to_stop_ends_cancelled_and_the_same_settings_start_anew(engine: Engine) -> None:
    with write_session(engine) as session:
        asked = _create(session)
        asked.status, asked.worker, asked.cancel_requested = RunStatus.running, "elsewhere:1:x", True
        asked.heartbeat_at = utcnow() - runs.STALE_AFTER - timedelta(seconds=1)
    with write_session(engine) as session:
        again = _create(session).id
    with read_session(engine) as session:
        old = session.get(Run, asked.id)
        assert (old.status, old.message) == (RunStatus.cancelled, "cancelled on request (its worker had gone)")
    assert again != asked.id and _count(engine) == 2


def _race(transaction: Callable[[], AbstractContextManager[Session]], creators: int = 4) -> list[object]:
    """`creators` threads creating the same run at the same moment; what each got (a run id or the error)."""
    barrier = threading.Barrier(creators)
    outcomes: list[object] = []

    def create() -> None:
        barrier.wait()
        try:
            with transaction() as session:
                outcomes.append(_create(session).id)
        except RunError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=create) for _ in range(creators)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.mark.parametrize("begin", ["write_session", "deferred"])
def test_concurrent_creates_with_the_same_settings_make_exactly_one_run(engine: Engine, begin: str) -> None:
    """Under `write_session`, and in a plain (on SQLite: deferred) transaction, as a caller might open one."""
    outcomes = _race(lambda: write_session(engine) if begin == "write_session" else _deferred(engine))
    created = [outcome for outcome in outcomes if isinstance(outcome, int)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, RunError)]
    assert len(created) == 1 and len(refused) == 3, outcomes
    assert all(f"run {created[0]} with the same settings is already queued" in str(exc) for exc in refused)
    assert _count(engine) == 1
