"""`python -m annotator worker` and `runs` as processes: runs queued without running (`--queue`), a worker taking
one run (`--once`), the listing, and the fault test: two workers on PostgreSQL, the one holding a run killed with
SIGKILL, the other takes it over and finishes it without re-sending answered requests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import LLMCall, Run
from tests.conftest import PROJECT_ROOT
from tests.construction.pipeline.conftest import add_problems
from tests.support.cli import run_forked
from tests.support.evaluation_items import scripted_solver
from tests.support.heavy_imports import heavy_imports
from tests.support.openai_server import OpenAIServer
from tests.support.postgres import create_database, drop_database
from tests.support.stored_rows import count_rows, transcripts
from tests.support.waiting import wait_for

HEARTBEAT_TIMEOUT = "3"  # seconds: a killed worker's run is taken over this long after its last heartbeat


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "ANNOTATOR_DATABASE_URL": url, "ANNOTATOR_HEARTBEAT_TIMEOUT": HEARTBEAT_TIMEOUT}


def _annotator(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A one-shot command, forked (`tests/support/cli.py`); the workers are fresh processes."""
    return run_forked(list(args), _env(url), timeout=180)


def _queue(url: str, server: OpenAIServer) -> int:
    """An evaluate run queued from the CLI; its id is all it prints."""
    result = _annotator(url, "evaluate", "--model", "m-x", "--prompt", "reliable", "--base-url", server.url,
                        "--api-key-env", "UNSET_TEST_KEY", "--concurrency", "4", "--backoff", "0.01", "--queue")
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip())


def _run(engine: Engine, run_id: int) -> Run:
    with read_session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run


@pytest.fixture
def two_databases(postgres_url: str) -> Iterator[tuple[str, str]]:
    names = [f"t_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    urls = [create_database(postgres_url, name) for name in names]
    yield urls[0], urls[1]
    for name in names:
        drop_database(postgres_url, name)


@pytest.mark.postgres
def test_two_workers_one_killed_with_sigkill_the_other_finishes_its_run(
    two_databases: tuple[str, str], tmp_path: Path
) -> None:
    problems = 40
    killed_url, calm_url = two_databases
    killed, calm = get_engine(killed_url), get_engine(calm_url)
    add_problems(killed, problems)
    add_problems(calm, problems)

    with OpenAIServer(answer=scripted_solver, latency=0.02) as server:
        run_id = _queue(killed_url, server)
        assert server.received.total() == 0 and _run(killed, run_id).status == "queued"  # queued, nothing sent
        server.hold_after(20)  # the run cannot end before the kill
        logs = [tmp_path / f"worker-{i}.log" for i in range(2)]
        workers = [
            subprocess.Popen([sys.executable, "-m", "annotator", "worker", "--kinds", "evaluate", "--poll", "0.1"],
                             env=_env(killed_url), cwd=PROJECT_ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)
            for log in logs
        ]
        try:
            # Mid-run: answers have come back (some more than 0.5 s ago) and the rest are held.
            wait_for(lambda: server.held >= 1 and min(t[0] for t in server.answer_times().values()) < time.time() - 0.6,
                     60, "the run to be under way")
            holder_id = _run(killed, run_id).worker or ""
            holder = next(w for w in workers if f":{w.pid}:" in holder_id)
            survivor = next(w for w in workers if w is not holder)
            killed_at = time.time()
            holder.send_signal(signal.SIGKILL)
            holder.wait()
            server.release()
            survivor_log = logs[workers.index(survivor)]
            # Its summary is printed once the run has ended and its transcripts are judged.
            wait_for(lambda: f"run {run_id}: " in survivor_log.read_text(), 120, "the run to end")
        finally:
            for worker in workers:
                worker.kill()
                worker.wait()
        run, said = _run(killed, run_id), survivor_log.read_text()
        assert run.status == "succeeded", said
        assert f":{survivor.pid}:" in (run.worker or "") and f"taken over from {holder_id}" in said
        answered_before = [key for key, times in server.answer_times().items() if times[0] < killed_at - 0.5]
        assert answered_before, "no answer was old enough to test"
        assert [key for key in answered_before if server.received[key] > 1] == [], "an answered request was sent again"
        assert set(server.completed) == set(server.received) and len(server.completed) == problems

    with OpenAIServer(answer=scripted_solver) as calm_server:  # the same run, undisturbed
        calm_id = _queue(calm_url, calm_server)
        result = _annotator(calm_url, "worker", "--once", "--kinds", "evaluate")
        assert result.returncode == 0, result.stdout + result.stderr
        assert _run(calm, calm_id).status == "succeeded"
    assert transcripts(killed) == transcripts(calm) and len(transcripts(calm)) == problems
    with read_session(killed) as session:
        assert len(session.execute(select(LLMCall.key)).all()) == problems


def test_queue_starts_nothing_and_a_worker_once_runs_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_problems(engine, 5)
    with OpenAIServer(answer=scripted_solver) as server:
        run_id = _queue(url, server)
        listed = json.loads(_annotator(url, "runs", "--json").stdout)
        assert [(r["run"], r["status"], r["worker"], r["heartbeat_age_seconds"]) for r in listed["runs"]] == [
            (run_id, "queued", None, None)]
        assert listed["workers"] == [] and server.received.total() == 0 and count_rows(engine, LLMCall) == 0

        done = _annotator(url, "worker", "--once", "--kinds", "evaluate")
        assert done.returncode == 0, done.stderr
        assert f"run {run_id} (evaluate) claimed by" in done.stdout and f"run {run_id}: succeeded" in done.stdout
        run = _run(engine, run_id)
        assert run.status == "succeeded" and run.worker and run.claimed_at is not None
        assert server.received.total() == 5 and count_rows(engine, LLMCall) == 5

        again = _annotator(url, "worker", "--once")
        assert again.returncode == 2 and again.stderr.strip() == (
            "error: no run of generate, evaluate, judge to take: none is queued, or held by a worker that is alive")
        listed = json.loads(_annotator(url, "runs", "--json").stdout)
        row = listed["runs"][0]
        assert (row["status"], row["worker"], row["done"], row["total"]) == ("succeeded", run.worker, 5, 5)
        text = _annotator(url, "runs").stdout.splitlines()
        assert text[0].split() == ["run", "kind", "status", "done", "worker", "heartbeat", "by"]
        assert text[1].split() == [str(run_id), "evaluate", "succeeded", "5/5", run.worker, "-", "cli"]
        assert text[-1] == "workers: none running"


def test_bad_worker_and_queue_options_are_one_line_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    bad_kind = _annotator(url, "worker", "--kinds", "evaluate,dream")
    assert bad_kind.returncode == 2 and bad_kind.stderr.strip() == (
        "error: --kinds takes kinds of run from generate, evaluate, judge; got 'evaluate,dream'")
    both = _annotator(url, "evaluate", "--model", "m", "--queue", "--run-id", "3")
    assert both.returncode == 2 and both.stderr.strip() == (
        "error: --queue creates a run; --run-id executes one that exists: give one of them")
    timeout = subprocess.run([sys.executable, "-m", "annotator", "worker", "--once"], cwd=PROJECT_ROOT, timeout=120,
                             env={**_env(url), "ANNOTATOR_HEARTBEAT_TIMEOUT": "soon"}, capture_output=True, text=True)
    assert timeout.returncode == 2 and timeout.stderr == (
        "error: ANNOTATOR_HEARTBEAT_TIMEOUT='soon': a number of seconds from 0.5 to 86,400\n")


def test_the_command_module_imports_nothing_heavy() -> None:
    heavy = ("openai", "pandas", "tqdm", "sqlalchemy", "annotator.runs", "annotator.runs.llm",
             "annotator.database.engine")
    assert heavy_imports("annotator.cli.workers", heavy) == []
