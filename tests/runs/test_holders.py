"""Who holds a run, as a process: a holder on this machine whose process has ended is known dead at once, a pid the
kernel has given to another process (another start time) is not taken for the holder, and a name from elsewhere says
nothing (the heartbeat decides). Against real processes, and through the database (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import Engine, select

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run, Worker, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs.claiming import claim
from annotator.runs.health import live_workers, serving
from annotator.runs.holders import ended, holder_id, process_started


@pytest.fixture
def waiting() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that waits until its stdin closes."""
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    yield process
    process.communicate(b"")


def _gone_name() -> tuple[int, str]:
    """The name a process wrote while it lived, once it has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    name = holder_id(process.pid)
    process.communicate(b"")
    return process.pid, name


def _reused(name: str) -> str:
    """`name` with another start time: what the name of an earlier process with the same pid looks like."""
    host, pid, ident = name.split(":")
    started, place = ident.split(".")
    return f"{host}:{pid}:{int(started) - 1}.{place}"


def test_a_holder_here_is_alive_while_its_process_lives(waiting: subprocess.Popen[bytes]) -> None:
    mine = runs.worker_id()
    assert mine == holder_id() and mine.split(":")[1] == str(os.getpid())
    assert mine.split(":")[2].split(".")[0] == str(process_started(os.getpid()))
    assert ended(mine) == [] and ended(holder_id(waiting.pid)) == []
    pid, name = _gone_name()
    assert ended(name) == [pid]
    assert ended(f"{name}, {mine}") == []  # a job's holders: one of them still lives
    assert ended(f"{name}, {name}") == [pid, pid]


def test_a_pid_reused_by_another_process_is_not_taken_for_the_holder(waiting: subprocess.Popen[bytes]) -> None:
    """The pid is alive, but it is another process than the one that wrote the name: the holder has ended."""
    assert ended(_reused(holder_id(waiting.pid))) == [waiting.pid]
    assert ended(_reused(runs.worker_id())) == [os.getpid()]


def test_a_name_from_elsewhere_or_without_a_start_time_says_nothing() -> None:
    pid, name = _gone_name()
    host, _, ident = name.split(":")
    started, place = ident.split(".")
    for other in (f"another-{host}:{pid}:{ident}",  # another machine
                  f"{host}:{pid}:{started}.{'0' * 12 if place != '0' * 12 else '1' * 12}",  # another boot or container
                  f"{host}:{pid}:0123abcd", "", None):  # a name without a start time (no /proc), or none
        assert ended(other) == [], other


def _running(engine: Engine, worker: str, **values: object) -> int:
    with write_session(engine) as session:
        run = Run(kind=RunKind.evaluate, status=RunStatus.running, prompt_version="standard", worker=worker,
                  started_at=utcnow(), heartbeat_at=utcnow(), **values)
        session.add(run)
        session.flush()
        assert run.id is not None
        return run.id


def test_a_run_whose_holder_ended_here_is_stale_and_taken_over_at_once(
    engine: Engine, waiting: subprocess.Popen[bytes]
) -> None:
    """Fresh heartbeats all: the holder's process decides, not the heartbeat timeout."""
    pid, gone = _gone_name()
    alive = _running(engine, holder_id(waiting.pid))
    reused = _running(engine, _reused(holder_id(waiting.pid)))
    dead = _running(engine, gone)
    with read_session(engine) as session:
        reasons = {run.id: runs.stale_reason(run) for run in session.scalars(select(Run))}
    assert reasons == {alive: None, reused: f"its process {waiting.pid} on this machine has ended",
                       dead: f"its process {pid} on this machine has ended"}
    taken = [claim(engine, kinds=["evaluate"]) for _ in range(3)]
    assert [(t.run_id, t.taken_from) for t in taken if t is not None] == [
        (reused, _reused(holder_id(waiting.pid))), (dead, gone)]
    with read_session(engine) as session:
        assert session.get(Run, alive).worker == holder_id(waiting.pid)


def test_a_worker_whose_process_ended_here_is_not_listed_live(
    engine: Engine, waiting: subprocess.Popen[bytes]
) -> None:
    _, gone = _gone_name()
    with write_session(engine) as session:
        session.add_all([Worker(id=gone, kinds="evaluate"), Worker(id=holder_id(waiting.pid), kinds="evaluate"),
                         Worker(id=_reused(holder_id(waiting.pid)), kinds="judge")])
    with read_session(engine) as session:
        assert [w.id for w in live_workers(session)] == [holder_id(waiting.pid)]
        assert serving(session, kind="judge") == []


def test_a_cancel_ends_a_run_whose_process_ended_without_a_worker(engine: Engine) -> None:
    _, gone = _gone_name()
    dead = _running(engine, gone)
    queued_for_a_process_that_died = _running(engine, None, pid=_gone_name()[0])
    with write_session(engine) as session:
        session.get(Run, queued_for_a_process_that_died).status = RunStatus.queued
    with write_session(engine) as session:
        assert runs.request_cancel(session, run_id=dead)
        assert runs.request_cancel(session, run_id=queued_for_a_process_that_died)
    with read_session(engine) as session:
        ended_runs = [session.get(Run, run_id) for run_id in (dead, queued_for_a_process_that_died)]
        assert [(r.status, r.cancel_requested, r.finished_at is not None, r.message) for r in ended_runs] == [
            (RunStatus.cancelled, True, True, "cancelled on request (its worker had gone)"),
            (RunStatus.cancelled, True, True, "cancelled on request before it started")]


def test_a_stale_run_held_elsewhere_is_still_decided_by_its_heartbeat(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANNOTATOR_HEARTBEAT_TIMEOUT", "5")
    pid, gone = _gone_name()
    elsewhere = f"another-{gone}"
    run_id = _running(engine, elsewhere)
    assert claim(engine, kinds=["evaluate"]) is None  # its pid means nothing here: it is alive while it beats
    with write_session(engine) as session:
        session.get(Run, run_id).heartbeat_at = utcnow() - timedelta(seconds=6)
    taken = claim(engine, kinds=["evaluate"])
    assert taken is not None and (taken.run_id, taken.taken_from) == (run_id, elsewhere)
