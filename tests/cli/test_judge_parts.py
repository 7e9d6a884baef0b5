"""A judge job split into parts that several `python -m annotator worker` processes take, on PostgreSQL with the
scripted OpenAI-compatible server: two workers at once, one of them killed with SIGKILL, a cancel of the job, a
worker stopped with SIGTERM handing its part back; and, on SQLite, the command executing its parts itself."""

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
from typing import Any

import pytest
from sqlalchemy import Engine, select

from annotator import runs
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Judgement, LLMCall, Run, Transcript
from tests.conftest import PROJECT_ROOT
from tests.support.cli import run_forked
from tests.support.llm_judge import SPECS, add_judged_transcripts, scripted_judge
from tests.support.openai_server import OpenAIServer
from tests.support.postgres import create_database, drop_database
from tests.support.waiting import wait_for

TRANSCRIPTS = SPECS * 4  # 32 transcripts, each its own prompt
HEARTBEAT_TIMEOUT = "3"  # seconds: a killed worker's part is taken over this long after its last heartbeat


def _env(url: str, timeout: str = HEARTBEAT_TIMEOUT) -> dict[str, str]:
    return {**os.environ, "ANNOTATOR_DATABASE_URL": url, "ANNOTATOR_HEARTBEAT_TIMEOUT": timeout}


def _annotator(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A one-shot command, forked (`tests/support/cli.py`); the workers are fresh processes."""
    return run_forked(list(args), _env(url), timeout=180)


def _judge(url: str, server: OpenAIServer, *extra: str) -> subprocess.CompletedProcess[str]:
    return _annotator(url, "judge", "llm", "--model", "judge-m", "--base-url", server.url,
                      "--api-key-env", "UNSET_TEST_KEY", "--concurrency", "2", "--backoff", "0.01", "--no-progress",
                      *extra)


def _queue(url: str, server: OpenAIServer, parts: int) -> int:
    queued = _judge(url, server, "--parts", str(parts), "--queue")
    assert queued.returncode == 0, queued.stderr
    return int(queued.stdout.strip())


def _worker(url: str, log: Path, *, timeout: str = HEARTBEAT_TIMEOUT) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "annotator", "worker", "--kinds", "judge", "--poll", "0.1"],
                            env=_env(url, timeout), cwd=PROJECT_ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)


def _runs(engine: Engine, job_id: int) -> tuple[Run, list[Run]]:
    """The job and its parts."""
    with read_session(engine) as session:
        job = session.get(Run, job_id)
        assert job is not None
        parts = list(session.scalars(select(Run).where(Run.parent_id == job_id).order_by(Run.id)))
        return job, parts


def _running(engine: Engine, job_id: int) -> dict[int, str]:
    """part id -> the worker holding it, for its running parts."""
    return {p.id: p.worker or "" for p in _runs(engine, job_id)[1] if p.status == "running" and p.id is not None}


def verdicts(engine: Engine) -> dict[str, tuple[str | None, str | None, str | None]]:
    """data_id -> (the transcript's judge verdict, its judge version, the LLM judge's stored verdict)."""
    with read_session(engine) as session:
        stored = dict(session.execute(select(Judgement.transcript_id, Judgement.verdict)).all())
        rows = session.execute(select(Transcript.id, Transcript.data_id, Transcript.judge, Transcript.judge_version))
        return {row.data_id: (row.judge, row.judge_version, stored.get(row.id)) for row in rows}


def _judged_by_part(engine: Engine, parts: list[Run]) -> dict[int, list[int]]:
    """part id -> the transcripts whose verdict it stored; each within the part's range of ids."""
    with read_session(engine) as session:
        by_part: dict[int, list[int]] = {}
        for transcript_id, run_id in session.execute(select(Judgement.transcript_id, Judgement.run_id)):
            by_part.setdefault(run_id, []).append(transcript_id)
    for part in parts:
        first, last = (part.options or {})["transcripts"]
        assert all(first <= tid <= last for tid in by_part.get(part.id or 0, [])), part.id
    return by_part


def _stop(*workers: subprocess.Popen[bytes]) -> None:
    for worker in workers:
        worker.kill()
        worker.wait()


@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = create_database(postgres_url, name)
    add_judged_transcripts(get_engine(url), TRANSCRIPTS)
    yield url
    drop_database(postgres_url, name)


@pytest.fixture(scope="module")
def undisturbed(postgres_url: str) -> Iterator[dict[str, Any]]:
    """The verdicts of the same judge run in one piece, by the command alone."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = create_database(postgres_url, name)
    engine = get_engine(url)
    add_judged_transcripts(engine, TRANSCRIPTS)
    with OpenAIServer(answer=scripted_judge) as server:
        done = _judge(url, server)
        assert done.returncode == 0, done.stdout + done.stderr
    with read_session(engine) as session:
        assert [run.parts for run in session.scalars(select(Run))] == [0]  # 32 transcripts: one piece
    yield verdicts(engine)
    drop_database(postgres_url, name)


@pytest.mark.postgres
def test_two_workers_take_different_parts_of_one_job_at_once(
    pg_url: str, undisturbed: dict[str, Any], tmp_path: Path
) -> None:
    engine = get_engine(pg_url)
    with OpenAIServer(answer=scripted_judge, latency=0.02) as server:
        job_id = _queue(pg_url, server, parts=4)
        assert server.received.total() == 0
        server.hold_after(1)  # every part's requests wait until both workers hold one
        logs = [tmp_path / f"worker-{i}.log" for i in range(2)]
        workers = [_worker(pg_url, log) for log in logs]
        try:
            wait_for(lambda: len(set(_running(engine, job_id).values())) == 2, 60, "both workers to hold a part")
            assert _runs(engine, job_id)[0].status == "running"
            server.release()
            wait_for(lambda: _runs(engine, job_id)[0].status == "succeeded", 120, "the job to end")
            listed = json.loads(_annotator(pg_url, "runs", "--json").stdout)["runs"][0]
        finally:
            _stop(*workers)
    job, parts = _runs(engine, job_id)
    held_by = {p.worker for p in parts}
    assert {p.status for p in parts} == {"succeeded"} and len(parts) == 4
    assert len(held_by) == 2 and all(any(f":{w.pid}:" in (h or "") for h in held_by) for w in workers), (
        "each worker executed parts")
    assert (job.problems_done, job.problems_total, (job.counters or {})["judged"]) == (32, 32, 32)
    assert set(server.received) == set(server.completed) and server.received.total() == 32  # each asked once
    by_part = _judged_by_part(engine, parts)  # each part judged transcripts of its own range
    with read_session(engine) as session:
        assert sorted(t for tids in by_part.values() for t in tids) == sorted(session.scalars(select(Transcript.id)))
    assert set(by_part) == {p.id for p in parts}
    assert verdicts(engine) == undisturbed
    assert (listed["run"], listed["status"], listed["done"], listed["parts"]["count"]) == (job_id, "succeeded", 32, 4)
    assert listed["parts"]["by_status"] == {"succeeded": 4} and set(listed["parts"]["workers"]) == held_by
    assert [(row["part"], row["worker"]) for row in listed["part_runs"]] == [(i + 1, p.worker) for i, p in
                                                                            enumerate(parts)]
    for log in logs:  # the heartbeat thread beat the parts and their job without a failure
        assert "heartbeat failed" not in log.read_text() and "Traceback" not in log.read_text()


@pytest.mark.postgres
def test_a_worker_killed_mid_part_the_other_finishes_every_part(
    pg_url: str, undisturbed: dict[str, Any], tmp_path: Path
) -> None:
    engine = get_engine(pg_url)
    with OpenAIServer(answer=scripted_judge, latency=0.02) as server:
        job_id = _queue(pg_url, server, parts=3)
        server.hold_after(6)  # both workers are mid-part when one is killed
        logs = [tmp_path / f"worker-{i}.log" for i in range(2)]
        workers = [_worker(pg_url, log) for log in logs]
        try:
            wait_for(lambda: len(set(_running(engine, job_id).values())) == 2 and server.held >= 2
                     and min(t[0] for t in server.answer_times().values()) < time.time() - 0.6,
                     60, "both workers to be mid-part")
            running = _running(engine, job_id)
            killed_part = min(running)
            holder = next(w for w in workers if f":{w.pid}:" in running[killed_part])
            survivor = next(w for w in workers if w is not holder)
            killed_at = time.time()
            holder.send_signal(signal.SIGKILL)
            holder.wait()
            server.release()
            wait_for(lambda: _runs(engine, job_id)[0].status not in ("queued", "running"), 120, "the job to end")
        finally:
            _stop(*workers)
    job, parts = _runs(engine, job_id)
    said = logs[workers.index(survivor)].read_text()
    assert job.status == "succeeded", said
    assert {p.status for p in parts} == {"succeeded"}
    assert all(f":{survivor.pid}:" in (p.worker or "") for p in parts), "the survivor finished every part"
    assert f"run {killed_part} (judge, part " in said and f"taken over from {running[killed_part]}" in said
    answered_before = [key for key, times in server.answer_times().items() if times[0] < killed_at - 0.5]
    assert answered_before, "no answer was old enough to test"
    assert [key for key in answered_before if server.received[key] > 1] == [], "an answered request was sent again"
    assert set(server.completed) == set(server.received) and len(server.completed) == 32
    assert verdicts(engine) == undisturbed


@pytest.mark.postgres
def test_cancel_of_the_job_stops_every_part(pg_url: str, tmp_path: Path) -> None:
    engine = get_engine(pg_url)
    with OpenAIServer(answer=scripted_judge) as server:
        job_id = _queue(pg_url, server, parts=4)
        server.hold_after(1)
        workers = [_worker(pg_url, tmp_path / f"worker-{i}.log") for i in range(2)]
        try:
            wait_for(lambda: len(set(_running(engine, job_id).values())) == 2, 60, "both workers to hold a part")
            held = _running(engine, job_id)
            with write_session(engine) as session:
                assert runs.request_cancel(session, run_id=job_id)
            # The parts no worker holds end at once; the two held ones once their workers read the request.
            assert [p.status for p in _runs(engine, job_id)[1] if p.id not in held] == ["cancelled", "cancelled"]
            wait_for(lambda: _runs(engine, job_id)[0].status != "running", 60, "the job to stop")
            sent = server.received.total()
            server.release()
            assert all(worker.poll() is None for worker in workers)  # still serving, with nothing to take
        finally:
            _stop(*workers)
    job, parts = _runs(engine, job_id)
    assert (job.status, job.message, job.cancel_requested) == ("cancelled", "cancelled on request", True)
    assert [p.status for p in parts] == ["cancelled"] * 4 and all(p.finished_at is not None for p in parts)
    # Nothing was asked after the cancel: the first answer and the two workers' requests in flight (two each).
    assert sent <= 5 and server.received.total() == sent
    assert job.problems_done < 32


@pytest.mark.postgres
def test_a_worker_stopped_with_sigterm_hands_its_part_back_for_another_to_take_at_once(
    pg_url: str, undisturbed: dict[str, Any], tmp_path: Path
) -> None:
    engine = get_engine(pg_url)
    timeout = "600"  # no takeover by heartbeat timeout within this test
    with OpenAIServer(answer=scripted_judge) as server:
        job_id = _queue(pg_url, server, parts=2)
        server.hold_after(3)
        first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
        first = _worker(pg_url, first_log, timeout=timeout)
        try:
            wait_for(lambda: server.held >= 2, 60, "the first worker to be mid-part")
            part_id, = _running(engine, job_id)
            in_flight = server.held
            first.send_signal(signal.SIGTERM)
            wait_for(lambda: (_runs(engine, job_id)[1][0].message or "").startswith("handing back"), 30,
                     "the worker to stop taking transcripts")
            server.release()  # the requests in flight are answered, and kept
            assert first.wait(timeout=60) == 0, first_log.read_text()
            part = _runs(engine, job_id)[1][0]
            assert (part.id, part.status, part.worker, part.heartbeat_at, part.pid) == (
                part_id, "queued", None, None, None)
            assert part.message and part.message.startswith("handed back by ")
            assert _runs(engine, job_id)[0].status == "queued"
            # It took no transcript after the signal; those it had taken were answered and kept.
            assert in_flight < part.problems_done == server.total_completed() < part.problems_total
            second = _worker(pg_url, second_log, timeout=timeout)
            try:
                wait_for(lambda: _runs(engine, job_id)[0].status not in ("queued", "running"), 120, "the job to end")
            finally:
                _stop(second)
        finally:
            _stop(first)
    job, parts = _runs(engine, job_id)
    said = second_log.read_text()
    assert job.status == "succeeded" and f"run {part_id} (judge, part 1 of 2 of run {job_id}) claimed by" in said
    assert "taken over" not in said  # it was queued, not held by a silent worker
    assert all(f":{second.pid}:" in (p.worker or "") for p in parts)
    assert max(server.received.values()) == 1 and len(server.received) == 32  # the answers kept were not asked again
    assert verdicts(engine) == undisturbed


def test_on_sqlite_the_command_executes_its_parts_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'parts.sqlite'}"
    plain_url = f"sqlite:///{tmp_path / 'plain.sqlite'}"
    engine, plain = get_engine(url), get_engine(plain_url)
    add_judged_transcripts(engine, TRANSCRIPTS)
    add_judged_transcripts(plain, TRANSCRIPTS)
    with OpenAIServer(answer=scripted_judge) as server:
        done = _judge(url, server, "--parts", "3")
        assert done.returncode == 0, done.stderr
        in_one = _judge(plain_url, server)
        assert in_one.returncode == 0
    summary = in_one.stdout.split("\nrun 1: ")[1].split(", tokens")[0]
    assert summary.startswith("succeeded; 32/32 responses, 32 verdicts stored (F ")
    assert f"\nrun 1: {summary}" in done.stdout  # the job's summary is the sum of its parts'
    with OpenAIServer(answer=scripted_judge) as server:
        again = _judge(url, server, "--parts", "3")  # the same job again: every part skips what it has
        assert again.returncode == 0 and "0/0 responses, 0 verdicts stored (none), 32 already judged" in again.stdout
    assert verdicts(engine) == verdicts(plain)
    job, parts = _runs(engine, 1)
    assert [(p.status, p.problems_total, (p.options or {})["transcripts"]) for p in parts] == [
        ("succeeded", 11, [1, 11]), ("succeeded", 11, [12, 22]), ("succeeded", 10, [23, 32])]
    text = _annotator(url, "runs").stdout.splitlines()
    assert text[1].split()[:5] == ["5", "judge", "(3", "parts:", "3"]  # the newest job first
    assert [line.split()[:4] for line in text[2:5]] == [
        ["6", "part", "1", "of"], ["7", "part", "2", "of"], ["8", "part", "3", "of"]]
    assert text[5].split()[:2] == ["1", "judge"]


def test_the_command_killed_mid_job_then_run_again_resumes_the_job_at_once(database_url: str, tmp_path: Path) -> None:
    """`judge llm --parts 2` executes its parts itself; killed with SIGKILL mid-part, its process is gone and the same
    command resumes the same job at once (the default heartbeat timeout, a minute, is not waited for): every part
    ends, the job counts its whole progress, and no answered request is sent again."""
    engine, calm_url = get_engine(database_url), f"sqlite:///{tmp_path / 'calm.sqlite'}"
    add_judged_transcripts(engine, TRANSCRIPTS)
    add_judged_transcripts(get_engine(calm_url), TRANSCRIPTS)
    env = {name: value for name, value in _env(database_url).items() if name != "ANNOTATOR_HEARTBEAT_TIMEOUT"}
    command = [sys.executable, "-m", "annotator", "judge", "llm", "--model", "judge-m", "--api-key-env",
               "UNSET_TEST_KEY", "--concurrency", "2", "--backoff", "0.01", "--no-progress", "--parts", "2"]
    with OpenAIServer(answer=scripted_judge) as server:
        server.hold_after(20)  # mid-way through the second part
        process = subprocess.Popen([*command, "--base-url", server.url], env=env, cwd=PROJECT_ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: server.held >= 1 and server.inflight == server.held
                     and _calls(engine) == server.total_completed(), 60, "the command to stall")
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        job, parts = _runs(engine, 1)
        assert [job.status, *(p.status for p in parts)] == ["running", "succeeded", "running"]
        assert runs.stale_reason(job) == f"its process {process.pid} on this machine has ended"
        server.release()
        again = subprocess.run([*command, "--base-url", server.url], env=env, cwd=PROJECT_ROOT, capture_output=True,
                               text=True, timeout=180)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "run 1: resumed" in again.stderr and "run 1: succeeded; 32/32 responses" in again.stdout, again.stdout
        assert max(server.completed.values()) == 1 and server.total_completed() == 32
    job, parts = _runs(engine, 1)
    assert [(r.status, r.problems_done, r.problems_total) for r in (job, *parts)] == [
        ("succeeded", 32, 32), ("succeeded", 16, 16), ("succeeded", 16, 16)]
    with read_session(engine) as session:
        assert len(session.scalars(select(Run.id)).all()) == 3  # the job and its parts: nothing beside them
    with OpenAIServer(answer=scripted_judge) as calm_server:
        calm = subprocess.run([*command, "--base-url", calm_server.url], cwd=PROJECT_ROOT, capture_output=True,
                              text=True, timeout=180, env={**env, "ANNOTATOR_DATABASE_URL": calm_url})
        assert calm.returncode == 0, calm.stderr
    assert verdicts(engine) == verdicts(get_engine(calm_url))


def _calls(engine: Engine) -> int:
    with read_session(engine) as session:
        return len(session.scalars(select(LLMCall.key)).all())
