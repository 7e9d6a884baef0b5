"""Creating runs: one queued or running run per kind and settings, even when two creates race."""

from __future__ import annotations

import os
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
from annotator.db import read_session, write_session
from annotator.models import Run, utcnow
from annotator.runs import RunError
from annotator.vocabulary import RunKind, RunStatus

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
    """Liveness is the heartbeat alone: a dead pid (perhaps another machine's) with a fresh heartbeat still
    blocks; a heartbeat older than the timeout blocks nothing (that run spends nothing more)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    with write_session(engine) as session:
        fresh = _create(session)
        fresh.status, fresh.pid, fresh.heartbeat_at = RunStatus.running, process.pid, utcnow()
    with pytest.raises(RunError, match=f"run {fresh.id} with the same settings is already running"):
        with write_session(engine) as session:
            _create(session)
    with write_session(engine) as session:
        session.get(Run, fresh.id).heartbeat_at = utcnow() - runs.STALE_AFTER - timedelta(seconds=1)
    with write_session(engine) as session:
        again = _create(session)
        again.status, again.pid, again.heartbeat_at = RunStatus.running, os.getpid(), utcnow()
    with read_session(engine) as session:  # the stale one is failed: no worker takes it over to do the same work
        old = session.get(Run, fresh.id)
        assert (old.status, old.cancel_requested, old.message) == (
            RunStatus.failed, True, f"no sign of life for over 60 s; superseded by run {again.id}")
    with pytest.raises(RunError, match=f"run {again.id} with the same settings is already running"):
        with write_session(engine) as session:
            _create(session)


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
