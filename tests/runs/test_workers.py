"""Workers claiming runs: never the same run twice (PostgreSQL's SKIP LOCKED, SQLite's write lock), taking over a
run whose heartbeat stopped, leaving alone a run another worker holds, and a cancel reaching a run on a worker in
another process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run, Worker, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs.claiming import claim
from annotator.runs.health import serving
from annotator.runs.llm import CallStats
from tests.conftest import PROJECT_ROOT
from tests.construction.pipeline.conftest import add_problems
from tests.support.evaluation_items import scripted_solver
from tests.support.openai_server import OpenAIServer
from tests.support.waiting import wait_for

ELSEWHERE = "other-host:4242:0123abcd"  # a worker on another machine


def _add(engine: Engine, count: int = 1, **values: object) -> list[int]:
    with write_session(engine) as session:
        fields = {"kind": RunKind.evaluate, "status": RunStatus.queued, "prompt_version": "standard", **values}
        added = [Run(**fields) for _ in range(count)]
        session.add_all(added)
        session.flush()
        return [run.id for run in added if run.id is not None]


def _get(engine: Engine, run_id: int) -> Run:
    with read_session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run


def test_racing_workers_never_claim_the_same_run(engine: Engine) -> None:
    ids = _add(engine, 12)
    barrier = threading.Barrier(4)
    claimed: list[int] = []

    def work() -> None:
        barrier.wait()
        while (got := claim(engine, kinds=["evaluate"])) is not None:
            claimed.append(got.run_id)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(claimed) == ids  # each run once
    assert {(_get(engine, i).status, _get(engine, i).worker) for i in ids} == {(RunStatus.running, runs.worker_id())}


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_on_postgres_a_claim_skips_a_run_another_worker_is_claiming_without_waiting(engine: Engine) -> None:
    first, second = _add(engine, 2)
    got: list[int | None] = []
    with write_session(engine) as session:
        held = runs.claim_next(session, kinds=["evaluate"])  # its row stays locked until this transaction ends
        assert held is not None and held[0].id == first
        other = threading.Thread(target=lambda: got.append(getattr(claim(engine, kinds=["evaluate"]), "run_id", None)))
        other.start()
        other.join(timeout=30)
        assert not other.is_alive(), "the second claim waited for the first"
    assert got == [second] and _get(engine, second).status == RunStatus.running


def test_a_run_whose_heartbeat_stopped_is_taken_over_and_a_live_one_is_not(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANNOTATOR_HEARTBEAT_TIMEOUT", "5")
    now = utcnow()
    live, = _add(engine, status=RunStatus.running, worker=ELSEWHERE, heartbeat_at=now - timedelta(seconds=4))
    dead, = _add(engine, status=RunStatus.running, worker=ELSEWHERE, started_at=now - timedelta(hours=1),
                 heartbeat_at=now - timedelta(seconds=6), problems_done=7)
    taken = claim(engine, kinds=["evaluate"])
    assert taken is not None and (taken.run_id, taken.taken_from) == (dead, ELSEWHERE)
    run = _get(engine, dead)
    assert (run.status, run.worker, run.problems_done) == (RunStatus.running, runs.worker_id(), 7)
    assert run.started_at == now - timedelta(hours=1) and run.claimed_at is not None and run.claimed_at > now
    assert claim(engine, kinds=["evaluate"]) is None and _get(engine, live).worker == ELSEWHERE
    assert claim(engine, kinds=["generate"]) is None  # only the kinds asked for


def test_a_silent_run_asked_to_stop_ends_cancelled_instead_of_being_taken_over(engine: Engine) -> None:
    stopped, = _add(engine, status=RunStatus.running, worker=ELSEWHERE, cancel_requested=True,
                    heartbeat_at=utcnow() - runs.STALE_AFTER - timedelta(seconds=1))
    assert claim(engine, kinds=["evaluate"]) is None
    run = _get(engine, stopped)
    assert (run.status, run.worker, run.message) == (
        RunStatus.cancelled, ELSEWHERE, "cancelled on request (its worker had gone)")


def test_a_worker_whose_run_was_taken_over_writes_nothing_more_to_it(engine: Engine) -> None:
    """Its next heartbeat finds the run held by another worker: it stops, and its counters and outcome are
    not written over the new holder's."""
    run_id, = _add(engine, status=RunStatus.running, worker=ELSEWHERE, heartbeat_at=utcnow(), problems_done=3)
    progress = runs.RunProgress(run_id, 10, CallStats())
    progress.done = 9
    with write_session(engine) as session:
        assert progress.save(session)  # stop
        progress.finish(session, status=RunStatus.failed, message="lost")
    run = _get(engine, run_id)
    assert (run.status, run.problems_done, run.message, run.worker) == (RunStatus.running, 3, None, ELSEWHERE)


def test_cancel_reaches_a_run_on_a_worker_in_another_process(database_url: str, engine: Engine) -> None:
    add_problems(engine, 12)
    with OpenAIServer(answer=scripted_solver) as server:
        server.hold_after(3)
        from annotator.runs.llm import RoleConfig
        from annotator.transcripts.collect.evaluate import create_run
        from annotator.transcripts.collect.options import EvaluateOptions

        options = EvaluateOptions(model=RoleConfig(model="m", base_url=server.url, api_key_env="UNSET_TEST_KEY"),
                                  prompt="reliable", concurrency=1, backoff_base=0.01)
        with write_session(engine) as session:
            run_id = create_run(session, options=options, created_by="boss").id
        assert run_id is not None
        worker = subprocess.Popen(
            [sys.executable, "-m", "annotator", "worker", "--kinds", "evaluate", "--poll", "0.1"], cwd=PROJECT_ROOT,
            env={**os.environ, "ANNOTATOR_DATABASE_URL": database_url}, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )
        try:
            wait_for(lambda: server.held >= 1, 60, "the worker to be under way")
            assert f":{worker.pid}:" in (_get(engine, run_id).worker or "")
            with write_session(engine) as session:
                assert runs.request_cancel(session, run_id=run_id)
            # Still held: only the cancel can end it.
            wait_for(lambda: _get(engine, run_id).status != RunStatus.running, 60, "the run to stop")
        finally:
            server.release()
            worker.terminate()
            output = worker.communicate(timeout=60)[0]
    run = _get(engine, run_id)
    assert (run.status, run.message) == (RunStatus.cancelled, "cancelled on request"), output
    assert 3 <= run.problems_done < 12


def test_the_app_starts_a_process_only_when_no_live_worker_serves_the_kind(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "/bin/true")  # a process that starts and does nothing
    with write_session(sqlite_engine) as session:
        session.add(Worker(id=ELSEWHERE, kinds="generate,evaluate"))
        session.add(Worker(id="gone:1:x", kinds="generate", heartbeat_at=utcnow() - timedelta(hours=1)))
    served, = _add(sqlite_engine)
    assert runs.start(sqlite_engine, run_id=served, log_dir=tmp_path) is None
    assert _get(sqlite_engine, served).pid is None and not tmp_path.joinpath(f"run-{served}.log").exists()
    with read_session(sqlite_engine) as session:
        assert serving(session, kind="evaluate") == [ELSEWHERE] and serving(session, kind="generate") == [ELSEWHERE]
    with write_session(sqlite_engine) as session:
        session.get(Worker, ELSEWHERE).heartbeat_at = utcnow() - runs.STALE_AFTER - timedelta(seconds=1)
    alone, = _add(sqlite_engine)
    pid = runs.start(sqlite_engine, run_id=alone, log_dir=tmp_path)
    assert pid is not None and _get(sqlite_engine, alone).pid == pid


def test_a_queued_run_no_process_was_started_for_is_cancelled_at_once(engine: Engine) -> None:
    waiting, started = _add(engine), _add(engine, pid=os.getpid())
    with write_session(engine) as session:
        assert runs.request_cancel(session, run_id=waiting[0]) and runs.request_cancel(session, run_id=started[0])
    assert (_get(engine, waiting[0]).status, _get(engine, waiting[0]).finished_at is not None) == (
        RunStatus.cancelled, True)
    # Its process may be claiming it this moment: it is asked, and ends the run itself.
    assert (_get(engine, started[0]).status, _get(engine, started[0]).cancel_requested) == (RunStatus.queued, True)
