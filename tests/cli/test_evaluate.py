"""`python -m annotator evaluate` as a process: killed with SIGKILL mid-run and started again, it resumes the run at
once and sends no answered request twice (SQLite and PostgreSQL); exit codes; the API key is sent but kept nowhere;
the command loads nothing heavy to start."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine, select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import LLMCall, Run, Transcript
from annotator.runs import is_stale
from tests.conftest import PROJECT_ROOT
from tests.construction.pipeline.conftest import add_problems
from tests.support.evaluation_items import add_evaluation_items, scripted_solver
from tests.support.heavy_imports import HEAVY, heavy_imports
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.stored_rows import count_rows, transcripts
from tests.support.waiting import wait_for


def _cli(server: OpenAIServer, *extra: str, key_env: str = "UNSET_TEST_KEY") -> list[str]:
    return [
        sys.executable, "-m", "annotator", "evaluate", "--model", "m-x", "--prompt", "reliable",
        "--base-url", server.url, "--api-key-env", key_env, "--concurrency", "4", "--backoff", "0.01",
        "--no-progress", *extra,
    ]


def _env(url: str, **extra: str) -> dict[str, str]:
    """The command's environment; the heartbeat timeout its default (a minute), whatever the tests' own."""
    inherited = {name: value for name, value in os.environ.items() if name != "ANNOTATOR_HEARTBEAT_TIMEOUT"}
    return {**inherited, "ANNOTATOR_DATABASE_URL": url, **extra}


def test_sigkill_mid_run_then_the_same_command_resumes_it_at_once(database_url: str, tmp_path: Path) -> None:
    """Killed without warning, the run's process is gone: `runs` says the run is stale at once, and the same command
    resumes the same run at once (no refusal, no waiting for the heartbeat to time out), counts its whole progress
    and sends no answered request again."""
    problems = 60
    calm_url = f"sqlite:///{tmp_path / 'calm.sqlite'}"
    killed, calm = get_engine(database_url), get_engine(calm_url)
    add_problems(killed, problems)
    add_problems(calm, problems)

    with OpenAIServer(answer=scripted_solver) as server:
        server.hold_after(12)
        process = subprocess.Popen(_cli(server), env=_env(database_url), cwd=PROJECT_ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # Stalled at a known point: every later request is held and every delivered answer is in the call
            # cache. Then killed without warning (some answers may not be transcripts yet).
            wait_for(lambda: server.held >= 1 and server.inflight == server.held
                     and count_rows(killed, LLMCall) == server.total_completed(), 60, "the client to stall")
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        assert process.returncode == -signal.SIGKILL
        cached, kept = count_rows(killed, LLMCall), count_rows(killed, Transcript)
        assert 12 <= cached < problems and kept <= cached
        run = _first_run(killed)
        assert (run.status, is_stale(run)) == ("running", True)  # as the kill left it, its heartbeat still fresh
        gone = f"its process {process.pid} on this machine has ended"
        listed, table = (subprocess.run([sys.executable, "-m", "annotator", "runs", *json_or_not], cwd=PROJECT_ROOT,
                                        env=_env(database_url), capture_output=True, text=True, timeout=120).stdout
                         for json_or_not in (["--json"], []))
        assert [(r["run"], r["status"], r["stale"]) for r in json.loads(listed)["runs"]] == [(1, "stale", gone)]
        assert table.splitlines()[1].split()[:3] == ["1", "evaluate", "stale"], table
        server.release()

        rerun = subprocess.run(_cli(server), env=_env(database_url), cwd=PROJECT_ROOT, capture_output=True,
                               text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        assert f"run 1: resumed ({gone})" in rerun.stderr
        # The same run, its whole progress: items with a transcript were skipped, answers the kill left without
        # one came from the call cache.
        assert f"run 1: succeeded; {problems}/{problems} responses" in rerun.stdout, rerun.stdout
        assert f"{kept} already collected" in rerun.stdout
        assert re.search(rf"requests {problems - cached} \(retries 0\), cache hits {cached - kept},", rerun.stdout)
        assert max(server.completed.values()) == 1, "an answered request was sent again"
        assert server.total_completed() == problems
    run = _first_run(killed)
    assert (run.status, run.problems_done, run.problems_total, run.message) == ("succeeded", problems, problems, None)
    assert count_rows(killed, Run) == 1

    with OpenAIServer(answer=scripted_solver) as calm_server:
        result = subprocess.run(_cli(calm_server), env=_env(calm_url), cwd=PROJECT_ROOT, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    assert transcripts(killed) == transcripts(calm) and len(transcripts(calm)) == problems


def _first_run(engine: Engine) -> Run:
    with read_session(engine) as session:
        run = session.get(Run, 1)
        assert run is not None
        return run


def test_exit_codes_and_the_api_key_is_sent_but_kept_nowhere(tmp_path: Path) -> None:
    secret = "sk-test-1a2b3c4d5e6f7a8b9c0d"
    url = f"sqlite:///{tmp_path / 'k.sqlite'}"
    engine = get_engine(url)
    add_evaluation_items(engine)
    with OpenAIServer(answer=scripted_solver) as server:
        server.inject("Problem 1: a train", *[Reply(status=503)] * 10)
        result = subprocess.run(_cli(server, "--max-retries", "1", key_env="SECRET_TEST_KEY"), cwd=PROJECT_ROOT,
                                env=_env(url, SECRET_TEST_KEY=secret), capture_output=True, text=True, timeout=120)
        assert result.returncode == 1, result.stderr
        assert "run 1: partial; 9/9 responses, 8 transcripts written" in result.stdout
        assert "aime_1 sample 0: m-x: HTTP 503 after 2 attempt(s)" in result.stderr
        assert server.authorizations[f"Bearer {secret}"] == sum(server.received.values()) > 0
    assert secret not in result.stdout + result.stderr
    assert secret.encode() not in b"".join(path.read_bytes() for path in tmp_path.glob("k.sqlite*"))
    with read_session(engine) as session:
        assert "SECRET_TEST_KEY" in str(session.execute(select(Run.models)).scalar_one())

    for arguments, message in [
        (["evaluate", "--prompt", "reliable"], "--model is required"),
        (["evaluate", "--model", "m", "--prompt", "std", "--base-url", server.url], "standard or reliable"),
        (["evaluate", "--model", "m", "--api-key-env", "UNSET_TEST_KEY"], "UNSET_TEST_KEY is not set"),
        (["evaluate", "--model", "gpt\u202e-4o", "--prompt", "reliable", "--base-url", server.url],
         "error: --model 'gpt\\u202e-4o' holds U+202E RIGHT-TO-LEFT OVERRIDE at character 4"),
    ]:
        refused = subprocess.run([sys.executable, "-m", "annotator", *arguments], cwd=PROJECT_ROOT, env=_env(url),
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and message in refused.stderr, (arguments, refused.stderr)
    assert count_rows(engine, Run) == 1  # a refused command creates no run


def test_the_command_module_imports_nothing_heavy() -> None:
    assert heavy_imports("annotator.cli.evaluate", HEAVY) == []


def test_a_second_evaluate_with_the_same_settings_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'twice.sqlite'}"
    add_problems(get_engine(url), 10)
    with OpenAIServer(answer=scripted_solver) as server:
        server.hold_after(3)
        first = subprocess.Popen(_cli(server), env=_env(url, UNSET_TEST_KEY="k"), cwd=PROJECT_ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: server.held >= 1, 60, "the first run to be at work")
            second = subprocess.run(_cli(server), env=_env(url, UNSET_TEST_KEY="k"), cwd=PROJECT_ROOT,
                                    capture_output=True, text=True, timeout=120)
            assert second.returncode == 2 and "Traceback" not in second.stderr
            assert second.stderr.strip() == ("error: run 1 with the same settings is already running (started by "
                                             "cli); wait for it to finish or cancel it before starting another")
            with read_session(get_engine(url)) as session:
                assert [run.id for run in session.scalars(select(Run))] == [1]
        finally:
            server.release()
            first.wait(timeout=120)
        assert first.returncode == 0, first.stderr


def test_a_trial_run_asks_both_sets_and_says_how_many(database_url: str, aime: Engine) -> None:
    """`evaluate --limit 50` over the AIME release (30 solvable, 132 unsolvable items) asks 9 solvable and 41
    unsolvable ones and says so; the same command again resumes the same items (nothing asked); `--seed 1` draws
    other items in the same proportion; `--limit 1` asks one item, of the bigger set."""

    def evaluate(server: OpenAIServer, *extra: str) -> str:
        done = subprocess.run(_cli(server, *extra), env=_env(database_url), cwd=PROJECT_ROOT, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def asked(run_id: int) -> tuple[int, int]:
        with read_session(aime) as session:
            rows = session.execute(select(Transcript.candidate_id).where(Transcript.run_id == run_id)).all()
        return sum(row.candidate_id is None for row in rows), sum(row.candidate_id is not None for row in rows)

    with OpenAIServer(answer=scripted_solver) as server:
        first = evaluate(server, "--limit", "50")
        assert "run 1: succeeded; 50/50 responses, 50 transcripts written, 0 already collected; items: 9 solvable, " \
               "41 unsolvable" in first
        assert asked(1) == (9, 41)
        again = evaluate(server, "--limit", "50")
        assert "0/0 responses, 0 transcripts written, 50 already collected; items: 9 solvable, 41 unsolvable" in again
        other = evaluate(server, "--limit", "50", "--seed", "1")
        assert "items: 9 solvable, 41 unsolvable" in other and "50 already collected" not in other
        written = sum(asked(3))
        assert 0 < written < 50  # some items of seed 1's draw were seed 0's too
        assert "items: 0 solvable, 1 unsolvable" in evaluate(server, "--limit", "1", "--prompt", "standard")
    with read_session(aime) as session:
        run = session.get(Run, 1)
        assert run is not None and run.options["seed"] == 0 and run.options["limit"] == 50
        assert (run.counters["solvable_items"], run.counters["unsolvable_items"]) == (9, 41)


def test_a_run_whose_answers_the_judge_cannot_compare_says_how_many_pairs(database_url: str, aime: Engine) -> None:
    """A model that answers every item with a difference of two exponent towers: the run stores every answer, judged,
    and its summary says how many (ground truth, answer) pairs were too costly to evaluate."""
    with OpenAIServer(answer=lambda prompt, model: "So $\\boxed{10^{10^{10}} - 10^{10^{10}}}$.") as server:
        done = subprocess.run(_cli(server, "--limit", "4"), env=_env(database_url), cwd=PROJECT_ROOT,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with read_session(aime) as session:
        verdicts = list(session.execute(select(Transcript.judge)).scalars())
    assert verdicts == ["F"] * 4
    assert "4/4 responses, 4 transcripts written" in done.stdout
    assert re.search(r"; [1-9]\d* distinct \(ground truth, answer\) pairs? ran out of time or were too costly to "
                     r"evaluate: judged incorrect\n", done.stdout), done.stdout
