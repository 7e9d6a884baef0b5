"""A judge job's parts in the database (SQLite and PostgreSQL): how a job is split, that a worker claims its parts and
never the job, that the job's row is the sum of its parts', and that resuming a stale job, marking it failed or
cancelling it reaches its parts; the app's one-run worker executing every part of a job."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import Engine, select, update

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run, Transcript, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs.claiming import claim, fail_if_held
from annotator.runs.holders import holder_id
from annotator.runs.kinds import spec
from annotator.runs.llm import RoleConfig
from annotator.runs.parts import job_status, roll_up
from annotator.runs.spec import command
from annotator.settings import limits
from annotator.transcripts.judge.llm import split
from annotator.transcripts.judge.llm_options import JudgeOptions
from tests.conftest import PROJECT_ROOT
from tests.support.llm_judge import SPECS, add_judged_transcripts, scripted_judge
from tests.support.openai_server import OpenAIServer

ELSEWHERE = "other-host:4242:0123abcd"


def _options(url: str = "http://127.0.0.1:9/v1", **values: object) -> JudgeOptions:
    return JudgeOptions(model=RoleConfig(model="judge-m", base_url=url, api_key_env="UNSET_TEST_KEY"),
                        backoff_base=0.01, **values)  # type: ignore[arg-type]


def _queue(engine: Engine, options: JudgeOptions) -> int:
    with write_session(engine) as session:
        return spec(RunKind.judge).queue(session, options=options, created_by="boss")


def _job(engine: Engine, job_id: int) -> tuple[Run, list[Run]]:
    with read_session(engine) as session:
        job = session.get(Run, job_id)
        assert job is not None
        return job, list(session.scalars(select(Run).where(Run.parent_id == job_id).order_by(Run.id)))


def test_a_job_is_split_into_ranges_of_its_scope(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = add_judged_transcripts(engine, SPECS * 3)  # 24 transcripts
    with write_session(engine) as session:
        session.execute(update(Transcript).where(Transcript.id.in_(ids[::2])).values(human="S"))
        assert split(session, options=_options(parts=5)) == [
            (ids[0], ids[5] - 1, 5), (ids[5], ids[10] - 1, 5), (ids[10], ids[15] - 1, 5), (ids[15], ids[20] - 1, 5),
            (ids[20], ids[23], 4)]
        # The scope first: reviewed only, the first 7 of them; no more parts than transcripts.
        reviewed = ids[::2][:7]
        assert split(session, options=_options(parts=3, only_reviewed=True, limit=7)) == [
            (reviewed[0], reviewed[3] - 1, 3), (reviewed[3], reviewed[6] - 1, 3), (reviewed[6], reviewed[6], 1)]
        assert len(split(session, options=_options(parts=200, limit=3))) == 3
        assert split(session, options=_options()) == []  # 24 transcripts: not worth splitting
        monkeypatch.setattr(limits, "JUDGE_PART_TRANSCRIPTS", 10)
        assert [count for _, _, count in split(session, options=_options())] == [8, 8, 8]


def test_workers_claim_a_jobs_parts_never_the_job_and_the_job_is_their_sum(engine: Engine) -> None:
    add_judged_transcripts(engine, SPECS)
    job_id = _queue(engine, _options(parts=3))
    job, parts = _job(engine, job_id)
    assert (job.status, job.parts, job.problems_total, [p.problems_total for p in parts]) == (
        "queued", 3, 8, [3, 3, 2])
    with read_session(engine) as session:
        assert [run.id for run in runs.recent_runs(session)] == [job_id]  # one run on a page, its parts in it
    first = claim(engine, kinds=["judge"])
    assert first is not None and (first.run_id, first.job_id) == (parts[0].id, job_id)
    assert first.part == f"part 1 of 3 of run {job_id}"
    assert _job(engine, job_id)[0].status == "running"
    with write_session(engine) as session:
        session.execute(update(Run).where(Run.id == parts[0].id).values(
            status=RunStatus.succeeded, problems_done=3, requests=3,
            counters={"judged": 3, "verdicts": {"S": 2, "F": 1}}, errors=[{"error": "one"}], finished_at=utcnow()))
        session.execute(update(Run).where(Run.id == parts[1].id).values(
            worker=ELSEWHERE, status=RunStatus.running, problems_done=1, requests=2, heartbeat_at=utcnow(),
            counters={"judged": 1, "verdicts": {"R": 1}}))
        roll_up(session, job_id)
    job = _job(engine, job_id)[0]
    assert (job.status, job.problems_done, job.requests, job.counters, job.errors) == (
        "running", 4, 5, {"judged": 4, "verdicts": {"S": 2, "F": 1, "R": 1}}, [{"error": "one"}])
    assert ELSEWHERE in (job.worker or "") and job.finished_at is None
    assert [c.run_id for c in [claim(engine, kinds=["judge"])] if c] == [parts[2].id]  # not the held one, not the job
    assert claim(engine, kinds=["judge"]) is None


@pytest.mark.parametrize(("statuses", "status"), [
    (["succeeded", "queued"], "queued"), (["succeeded", "running", "queued"], "running"),
    (["succeeded", "partial"], "partial"), (["partial", "cancelled", "succeeded"], "cancelled"),
    (["cancelled", "failed"], "failed"), (["succeeded", "succeeded"], "succeeded"),
])
def test_a_jobs_status_from_its_parts(statuses: list[str], status: str) -> None:
    assert job_status(statuses) == status


def test_a_stale_job_is_resumed_by_the_same_settings_and_marked_failed_fails_its_parts(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANNOTATOR_HEARTBEAT_TIMEOUT", "5")
    add_judged_transcripts(engine, SPECS)
    job_id = _queue(engine, _options(parts=2))
    parts = _job(engine, job_id)[1]

    def silent_part() -> None:
        silent = utcnow() - timedelta(seconds=10)
        with write_session(engine) as session:
            session.execute(update(Run).where(Run.id == parts[0].id).values(
                status=RunStatus.running, worker=ELSEWHERE, heartbeat_at=silent, started_at=silent, claimed_at=silent,
                problems_done=2))
            roll_up(session, job_id)

    silent_part()
    job = _job(engine, job_id)[0]
    assert job.status == "running" and runs.stale_reason(job) == "no sign of life for over 5 s"
    assert _queue(engine, _options(parts=2)) == job_id  # the same job, resumed: its running part queued again
    job, parts = _job(engine, job_id)
    assert [job.status, *(p.status for p in parts)] == ["queued"] * 3
    assert (parts[0].worker, parts[0].heartbeat_at, parts[0].problems_done, job.problems_done) == (None, None, 2, 2)
    assert parts[0].message == "resumed (no sign of life for over 5 s)"
    silent_part()
    with write_session(engine) as session:
        assert runs.fail_stale(session, run_id=job_id, by="boss")
    job, parts = _job(engine, job_id)
    assert [job.status, *(p.status for p in parts)] == ["failed"] * 3
    again = _queue(engine, _options(parts=2))  # it has ended: the same settings are a new job
    with write_session(engine) as session:
        assert runs.fail_stale(session, run_id=again) is False  # queued, not stale
        assert runs.request_cancel(session, run_id=again)
    job, parts = _job(engine, again)
    assert again != job_id and [job.status, *(p.status for p in parts)] == ["cancelled"] * 3


def test_a_cancel_ends_a_part_whose_process_has_ended_at_once(engine: Engine) -> None:
    add_judged_transcripts(engine, SPECS)
    job_id = _queue(engine, _options(parts=2))
    parts = _job(engine, job_id)[1]
    gone = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    name = holder_id(gone.pid)  # its name while it lives
    gone.communicate(b"")
    with write_session(engine) as session:
        session.execute(update(Run).where(Run.id == parts[0].id).values(
            status=RunStatus.running, worker=name, heartbeat_at=utcnow(), started_at=utcnow()))
        roll_up(session, job_id)
    with write_session(engine) as session:
        assert runs.request_cancel(session, run_id=job_id)
    job, parts = _job(engine, job_id)
    assert [job.status, *(p.status for p in parts)] == ["cancelled"] * 3  # no worker needed to end it
    assert parts[0].message == "cancelled on request (its worker had gone)"


def test_the_apps_one_run_worker_executes_every_part_of_a_job(sqlite_url: str, sqlite_engine: Engine) -> None:
    add_judged_transcripts(sqlite_engine, SPECS)
    with OpenAIServer(answer=scripted_judge) as server:
        job_id = _queue(sqlite_engine, _options(server.url, parts=3))
        # What the app starts for a run when no worker serves its kind (`runs.start`): a worker for that one run.
        done = subprocess.run([sys.executable, "-m", "annotator", *command("judge", run_id=job_id)], cwd=PROJECT_ROOT,
                              env={**os.environ, "ANNOTATOR_DATABASE_URL": sqlite_url}, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    job, parts = _job(sqlite_engine, job_id)
    assert [f"part {i} of 3 of run {job_id}" in done.stdout for i in (1, 2, 3)] == [True] * 3
    assert (job.status, job.problems_done, job.problems_total, (job.counters or {}).get("judged")) == (
        "succeeded", 8, 8, 8)
    assert {p.status for p in parts} == {"succeeded"} and server.received.total() == 8


def test_a_part_cancelled_or_broken_on_its_own_is_summed_into_its_job(engine: Engine) -> None:
    add_judged_transcripts(engine, SPECS)
    job_id = _queue(engine, _options(parts=2))
    parts = _job(engine, job_id)[1]
    with write_session(engine) as session:
        assert runs.request_cancel(session, run_id=parts[0].id or 0)
    assert (_job(engine, job_id)[0].status, _job(engine, job_id)[1][0].status) == ("queued", "cancelled")
    claimed = claim(engine, kinds=["judge"])
    assert claimed is not None and claimed.run_id == parts[1].id
    fail_if_held(engine, claimed.run_id, "RuntimeError: broke")  # what a worker does when a run's code breaks
    job = _job(engine, job_id)[0]
    assert (job.status, job.message) == ("failed", f"part 2 of 2 (run {parts[1].id}): RuntimeError: broke")
    assert job.finished_at is not None
