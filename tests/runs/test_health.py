"""Telling a live run from a dead one, and what an admin can do about a dead one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run
from annotator.database.vocabulary import ACTIVE_RUN_STATUSES, RunKind, RunStatus
from annotator.runs import RunError

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _run(**values: object) -> Run:
    fields = {"kind": RunKind.generate, "status": RunStatus.queued, "prompt_version": "v1", "created_at": NOW}
    return Run(**{**fields, **values})


def _add(engine: Engine, **values: object) -> int:
    with write_session(engine) as session:
        run = _run(**values)
        session.add(run)
        session.flush()
        assert run.id is not None
        return run.id


def _get(engine: Engine, run_id: int) -> Run:
    with read_session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run


def test_process_alive_tells_live_exited_and_zombie_processes_apart(exited_pid: int) -> None:
    assert runs.process_alive(os.getpid())
    assert not runs.process_alive(exited_pid)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = datetime.now(UTC) + timedelta(seconds=30)
        # Not waited for: it stays a zombie, which kill(pid, 0) alone would call alive.
        while runs.process_alive(child.pid):
            assert datetime.now(UTC) < deadline, "the child never exited"
            time.sleep(0.01)
    finally:
        child.wait()


def test_a_running_run_goes_stale_when_its_heartbeat_stops_whatever_its_pid(exited_pid: int) -> None:
    """Liveness is the heartbeat alone: the pid of a worker on another machine means nothing here."""
    for pid in (None, os.getpid(), exited_pid):
        run = _run(status=RunStatus.running, started_at=NOW, heartbeat_at=NOW, pid=pid, worker="elsewhere:1:x")
        assert runs.stale_reason(run, now=NOW + runs.STALE_AFTER) is None
        assert runs.stale_reason(run, now=NOW + runs.STALE_AFTER + timedelta(seconds=1)) == (
            "no sign of life for over 60 s")


def test_the_heartbeat_timeout_comes_from_the_environment(set_environment: Callable[..., None]) -> None:
    run = _run(status=RunStatus.running, started_at=NOW, heartbeat_at=NOW)
    assert runs.stale_after() == runs.STALE_AFTER == timedelta(seconds=60)
    set_environment(ANNOTATOR_HEARTBEAT_TIMEOUT="2.5")
    assert runs.stale_after() == timedelta(seconds=2.5)
    assert runs.stale_reason(run, now=NOW + timedelta(seconds=2)) is None
    assert runs.stale_reason(run, now=NOW + timedelta(seconds=3)) == "no sign of life for over 2.5 s"


def test_a_queued_run_waits_for_a_worker_and_goes_stale_only_when_its_own_process_failed(exited_pid: int) -> None:
    waiting = _run()  # queued for the workers: never stale, however long no worker comes
    assert runs.stale_reason(waiting, now=NOW + runs.START_TIMEOUT * 100) is None
    alive = _run(pid=os.getpid())
    assert runs.stale_reason(alive, now=NOW + timedelta(seconds=5)) is None
    assert "exited before it began" in (runs.stale_reason(_run(pid=exited_pid), now=NOW) or "")
    # A live process that has not claimed its run after START_TIMEOUT is stuck: stale too.
    assert runs.is_stale(alive, now=NOW + runs.START_TIMEOUT * 2)


@pytest.mark.parametrize("status", [s for s in RunStatus if s not in ACTIVE_RUN_STATUSES])
def test_a_finished_run_is_never_stale(status: RunStatus, exited_pid: int) -> None:
    assert runs.stale_reason(_run(status=status, pid=exited_pid), now=NOW + timedelta(days=1)) is None


def test_only_a_stale_run_can_be_marked_failed(sqlite_engine: Engine) -> None:
    stale = _add(sqlite_engine, created_at=datetime.now(UTC) - timedelta(hours=1), pid=os.getpid())
    fresh = _add(sqlite_engine, created_at=datetime.now(UTC), pid=os.getpid())
    with write_session(sqlite_engine) as session:
        assert runs.fail_stale(session, run_id=stale, by="boss")
        assert not runs.fail_stale(session, run_id=fresh, by="boss")
        assert not runs.fail_stale(session, run_id=stale, by="boss")  # failed now: nothing left to do
        assert not runs.fail_stale(session, run_id=999, by="boss")
    failed = _get(sqlite_engine, stale)
    assert (failed.status, failed.cancel_requested) == (RunStatus.failed, True) and failed.finished_at is not None
    assert failed.message == f"not started after {runs.START_TIMEOUT.seconds} s; marked failed by boss"
    assert _get(sqlite_engine, fresh).status == RunStatus.queued


def test_a_process_that_dies_before_it_claims_its_run_leaves_it_stale(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _add(sqlite_engine, created_at=datetime.now(UTC))
    monkeypatch.setattr(sys, "executable", "/bin/false")  # starts, and exits at once
    pid = runs.start_background(sqlite_engine, run_id=run_id, log_dir=tmp_path)
    run = _get(sqlite_engine, run_id)
    assert run.pid == pid and run.status == RunStatus.queued
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    while not runs.is_stale(run):
        assert datetime.now(UTC) < deadline, "the process never exited"
        time.sleep(0.01)
    assert "exited before it began" in (runs.stale_reason(run) or "")


def test_a_process_that_cannot_start_fails_its_run(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _add(sqlite_engine, created_at=datetime.now(UTC))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(RunError, match="could not start its process"):
        runs.start_background(sqlite_engine, run_id=run_id, log_dir=tmp_path)
    run = _get(sqlite_engine, run_id)
    assert run.status == RunStatus.failed and "could not start its process" in (run.message or "")
    with pytest.raises(RunError, match="no queued run"):
        runs.start_background(sqlite_engine, run_id=run_id, log_dir=tmp_path)


def test_recent_runs_of_one_kind_newest_first(sqlite_engine: Engine) -> None:
    ids = [_add(sqlite_engine) for _ in range(3)]
    with read_session(sqlite_engine) as session:
        assert [r.id for r in runs.recent_runs(session, kind=RunKind.generate, limit=2)] == ids[::-1][:2]
        assert [r.id for r in runs.recent_runs(session)] == ids[::-1]
