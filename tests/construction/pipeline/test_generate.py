"""The construction pipeline end to end against a real local OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from annotator.construction.pipeline import (
    GenerateOptions,
    create_run,
    drafts,
    execute_run,
    filtered_examples,
    request_cancel,
    run_generation,
)
from annotator.construction.pipeline.prompts import load_prompts
from annotator.database.engine import PROJECT_ROOT, get_engine, read_session, write_session
from annotator.database.models import Candidate, LLMCall
from annotator.database.models import Run as GenerationRun
from annotator.runs import is_stale
from annotator.runs.llm import RoleConfig
from tests.construction.pipeline.conftest import add_problems
from tests.support.cli import run_forked
from tests.support.openai_server import OpenAIServer, Reply, scripted_answer

# Per problem: 1 extraction, 4 rewrites, 4 + 4 verifications, and for the 3 candidates that pass
# (the scripted verifier rejects contradict_2) 3 rewritten_condition + 3 unsolvable_reason requests.
REQUESTS_PER_PROBLEM = 19


def _options(server: OpenAIServer, timeout: float = 10.0, **kwargs: Any) -> GenerateOptions:
    defaults: dict[str, Any] = {"concurrency": 4, "backoff_base": 0.01, "max_retries": 3}
    return GenerateOptions(
        extract=RoleConfig(model="m-i", base_url=server.url, api_key_env="UNSET_TEST_KEY", timeout=timeout),
        rewrite=RoleConfig(model="m-r", base_url=server.url, api_key_env="UNSET_TEST_KEY", timeout=timeout),
        **{**defaults, **kwargs},
    )


def _candidates(engine: Engine, *, any_server: bool = False) -> dict[str, dict[str, Any]]:
    """Candidates by data_id, without what differs between two equal runs (ids, times, run id).

    `any_server`: also without the base URL (and so the content hash), to compare runs against two servers.
    """
    with read_session(engine) as session:
        out = {}
        for c in session.execute(select(Candidate)).scalars():
            row = c.model_dump(exclude={"id", "problem_id", "created_at", "updated_at"})
            row["provenance"] = {k: v for k, v in (row["provenance"] or {}).items() if k != "run_id"}
            if any_server:  # the content hash covers the provenance, base URLs included
                row["provenance"].pop("content_sha256")
                for role in row["provenance"]["models"].values():
                    role.pop("base_url")
            out[c.data_id] = row
        return out


def test_full_run_keeps_every_intermediate_output(openai_server: OpenAIServer, engine: Engine) -> None:
    add_problems(engine, 3)
    summary = run_generation(engine, options=_options(openai_server))

    assert summary.status == "succeeded", summary.errors
    assert (summary.problems_done, summary.candidates_written, summary.candidates_filtered) == (3, 12, 3)
    assert summary.calls["requests"] == 3 * REQUESTS_PER_PROBLEM and summary.calls["cache_hits"] == 0
    assert summary.calls["prompt_tokens"] > 0 and summary.calls["completion_tokens"] > 0

    candidates = _candidates(engine)
    assert sorted(candidates) == sorted(
        f"aime_{i}_{kind}_{k}" for i in range(3) for kind in ("remove", "contradict") for k in (1, 2)
    )
    kept = candidates["aime_1_remove_1"]
    assert kept["status"] == "pending"
    assert kept["extracted_condition"] == "Problem 1: a train"
    assert kept["rewritten_question"].endswith("[remove: Problem 1: a train]")
    assert kept["rewritten_condition"] == "remove: Problem 1: a train"
    assert kept["unsolvable_reason"] == "A needed value is missing. So it cannot be solved."
    assert kept["question"].startswith("Problem 1: a train travels 11 km")
    assert kept["ground_truth"] == 142.0 and isinstance(kept["ground_truth"], float)
    outputs = kept["llm_outputs"]
    assert outputs["extraction"]["conditions"] == ["Problem 1: a train", "The question: its speed in km/h?"]
    assert outputs["rewrite"]["analysis"].startswith("Without 'Problem 1: a train'")
    assert outputs["verification"]["verdict"] is True and outputs["verification"]["content"] == "True"
    assert outputs["unsolvable"]["verdict"] is True
    assert outputs["unsolvable"]["analysis"] == "A needed value is missing."
    assert "rewritten_condition" in outputs and "unsolvable_reason" in outputs
    prompts = load_prompts()
    assert re.fullmatch(r"[0-9a-f]{64}", kept["provenance"]["content_sha256"])
    assert {k: v for k, v in kept["provenance"].items() if k != "content_sha256"} == {
        "generator": "reliablemath-pipeline", "prompt_version": "v1", "prompt_sha256": prompts.sha256,
        "steps": [1, 2], "models": {
            "extract": _options(openai_server).extract.public(), "rewrite": _options(openai_server).rewrite.public(),
        },
    }
    filtered = candidates["aime_1_contradict_2"]
    assert filtered["status"] == "filtered"
    assert filtered["llm_outputs"]["verification"]["verdict"] is False
    assert filtered["rewritten_condition"] is None and "rewritten_condition" not in filtered["llm_outputs"]

    with read_session(engine) as session:
        run = session.get(GenerationRun, summary.run_id)
        assert run is not None
        assert (run.status, run.problems_total, run.problems_done, run.candidates_written) == ("succeeded", 3, 3, 12)
        assert run.requests == 3 * REQUESTS_PER_PROBLEM and run.failures == 0 and run.finished_at is not None
        assert run.models["extract"]["model"] == "m-i" and run.prompt_version == "v1"

    # Again: every answer from the cache, nothing sent, the same candidates, and nothing rewritten: the
    # rows still name the first run as the one that produced them.
    written_by = _written_by(engine)
    assert {run_id for run_id, _ in written_by.values()} == {summary.run_id}
    sent_before = sum(openai_server.received.values())
    again = run_generation(engine, options=_options(openai_server))
    assert again.status == "succeeded"
    assert again.calls["requests"] == 0 and again.calls["cache_hits"] == 3 * REQUESTS_PER_PROBLEM
    assert (again.candidates_written, again.candidates_unchanged, again.candidates_filtered) == (0, 12, 3)
    assert sum(openai_server.received.values()) == sent_before
    assert _candidates(engine) == candidates
    assert _written_by(engine) == written_by


def _written_by(engine: Engine) -> dict[str, tuple[int, Any]]:
    """data_id -> (provenance run_id, updated_at)."""
    with read_session(engine) as session:
        return {c.data_id: ((c.provenance or {}).get("run_id"), c.updated_at)
                for c in session.execute(select(Candidate)).scalars()}


def test_rerun_rewrites_only_candidates_whose_content_differs(openai_server: OpenAIServer, engine: Engine) -> None:
    add_problems(engine, 2)
    first = run_generation(engine, options=_options(openai_server))
    assert first.candidates_written == 8
    original = _candidates(engine)
    # One row edited behind the pipeline's back, one from before content hashes were kept.
    with write_session(engine) as session:
        edited = session.execute(select(Candidate).where(Candidate.data_id == "aime_0_remove_1")).scalar_one()
        edited.rewritten_question, edited.provenance = "edited", {**edited.provenance, "content_sha256": "x" * 64}
        old = session.execute(select(Candidate).where(Candidate.data_id == "aime_1_contradict_2")).scalar_one()
        old.provenance = {k: v for k, v in old.provenance.items() if k != "content_sha256"}

    again = run_generation(engine, options=_options(openai_server))
    assert (again.candidates_written, again.candidates_unchanged) == (2, 6)
    assert {k for k, (run_id, _) in _written_by(engine).items() if run_id == again.run_id} == {
        "aime_0_remove_1", "aime_1_contradict_2"
    }
    assert _candidates(engine) == original  # both rewritten as the pipeline makes them, hash included


def test_faults_are_retried_recorded_and_nothing_completed_is_lost(
    openai_server: OpenAIServer, engine: Engine
) -> None:
    add_problems(engine, 4)
    server = openai_server
    server.inject("Problem 0: a train", Reply(status=429, headers={"Retry-After": "0.05"}))  # extraction of 0
    server.inject(lambda p: "question rewriter" in p and "Problem 1:" in p, Reply(drop=True), Reply(delay=2))
    # Problem 2, remove_1: the rewriter keeps failing; with 3 retries that candidate fails for good.
    server.inject(
        lambda p: "question rewriter" in p and "remove the key" in p
        and "Extracted Condition ###: Problem 2: a train" in p,
        *[Reply(status=500)] * 4,
    )
    # Problem 2, contradict_1: an answer without sections; problem 1's verifications: wrong sections / empty.
    server.inject(
        lambda p: "question rewriter" in p and "contradict to the condition" in p
        and "Extracted Condition ###: Problem 2: a train" in p,
        Reply(content="I would rather not."),
    )
    server.inject(
        lambda p: p.startswith("You are an excellent verifier.") and "Problem 1:" in p and "[remove: Problem 1" in p
        and "Unsolvable Analysis" not in p,
        Reply(content="### Original Answer ###: 11"),
    )
    server.inject(
        lambda p: "Unsolvable Analysis" in p and "[remove: The question:" in p and "Problem 1:" in p
        and "Your judgement" in p.rsplit("\n", 1)[-1],
        Reply(content=""),
    )
    server.inject("Problem 3: a train", Reply(content=""))  # extraction of 3: empty

    summary = run_generation(engine, options=_options(server, timeout=1.0))

    assert summary.status == "partial"
    assert summary.failures == 1 and summary.problems_done == 4
    assert summary.calls["retries"] >= 3 + 1 + 2
    [failed] = [e for e in summary.errors if e["kind"] != "unparseable"]
    assert (failed["position"], failed["step"], failed["kind"]) == (2, "rewrite", "server_error")
    [no_conditions] = [e for e in summary.errors if e["kind"] == "unparseable"]
    assert (no_conditions["position"], no_conditions["step"]) == (3, "extract")

    candidates = _candidates(engine)
    assert "aime_2_remove_1" not in candidates  # failed: not written, will be asked again
    assert not any(data_id.startswith("aime_3_") for data_id in candidates)
    assert len(candidates) == 4 + 4 + 3
    unreadable = candidates["aime_2_contradict_1"]
    assert unreadable["status"] == "filtered" and unreadable["rewritten_question"] == ""
    assert unreadable["llm_outputs"]["rewrite"]["content"] == "I would rather not."
    assert unreadable["llm_outputs"]["parse_errors"][0]["step"] == "rewrite"
    wrong = candidates["aime_1_remove_1"]
    assert wrong["status"] == "filtered" and wrong["llm_outputs"]["verification"]["verdict"] is None
    assert "Original Answer" in wrong["llm_outputs"]["parse_errors"][0]["error"]
    empty = candidates["aime_1_remove_2"]
    assert empty["status"] == "filtered" and empty["llm_outputs"]["unsolvable"]["verdict"] is None
    assert candidates["aime_0_remove_1"]["status"] == "pending"  # after the 429
    assert candidates["aime_1_contradict_1"]["status"] == "pending"  # after the drop and the timeout

    with read_session(engine) as session:
        run = session.get(GenerationRun, summary.run_id)
        assert run is not None and run.status == "partial" and run.failures == 1
        assert {e["step"] for e in run.errors} == {"rewrite", "extract"}
    # Why each was filtered is recorded on the candidate, and the run counts the reasons with examples.
    assert unreadable["llm_outputs"]["filtered_because"] == drafts.REWRITE_UNREADABLE
    assert wrong["llm_outputs"]["filtered_because"] == drafts.VERIFICATION_UNREADABLE
    assert empty["llm_outputs"]["filtered_because"] == drafts.UNSOLVABLE_UNREADABLE
    by_reason: dict[str, list[str]] = {}
    for data_id, candidate in candidates.items():
        if candidate["status"] == "filtered":
            by_reason.setdefault(candidate["llm_outputs"]["filtered_because"], []).append(data_id)
    assert len(by_reason) >= 4  # the three above and the scripted verifier's rejection of contradict_2
    reasons = run.counters["filtered_reasons"]
    assert {reason: entry["count"] for reason, entry in reasons.items()} == {
        reason: len(ids) for reason, ids in by_reason.items()}
    assert sum(entry["count"] for entry in reasons.values()) == run.candidates_filtered
    for reason, entry in reasons.items():
        assert set(entry["examples"]) <= set(by_reason[reason]) and len(entry["examples"]) == min(3, entry["count"])
    with read_session(engine) as session:  # an example opened: the rewrite and the answers that decided it
        [opened] = filtered_examples(session, data_ids=["aime_1_remove_1", "aime_0_remove_1"])  # the 2nd passed
    assert (opened["data_id"], opened["filtered_because"]) == ("aime_1_remove_1", drafts.VERIFICATION_UNREADABLE)
    assert opened["answers"]["verification"] == "### Original Answer ###: 11"
    assert opened["rewritten_question"] == wrong["rewritten_question"] != ""

    # The re-run asks only what never completed: the failed rewrite and its verification chain.
    completed_before = dict(server.completed)
    rerun = run_generation(engine, options=_options(server, timeout=1.0))
    assert rerun.status == "succeeded" and rerun.failures == 0
    assert rerun.calls["requests"] == 1 + 2 + 2  # rewrite, verify + unsolvable, condition + reason
    assert all(server.completed[key] == count for key, count in completed_before.items()), "sent again"
    assert _candidates(engine)["aime_2_remove_1"]["status"] == "pending"


def _count_calls(engine: Engine) -> int:
    with read_session(engine) as session:
        return session.execute(select(func.count()).select_from(LLMCall)).scalar_one()


def _count_candidates(engine: Engine) -> int:
    with read_session(engine) as session:
        return session.execute(select(func.count()).select_from(Candidate)).scalar_one()


def _wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _cli(url: str, server: OpenAIServer, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "annotator", "generate", "--extract-model", "m-i", "--rewrite-model", "m-r",
        "--base-url", server.url, "--api-key-env", "UNSET_TEST_KEY", "--concurrency", "4", "--backoff", "0.01",
        "--no-progress", *extra,
    ]


def _env(url: str) -> dict[str, str]:
    """The command's environment; the heartbeat timeout its default (a minute), whatever the tests' own."""
    inherited = {name: value for name, value in os.environ.items() if name != "ANNOTATOR_HEARTBEAT_TIMEOUT"}
    return {**inherited, "ANNOTATOR_DATABASE_URL": url}


def test_sigkill_mid_run_then_rerun_repeats_no_completed_request(tmp_path: Path) -> None:
    """The same command resumes the killed run at once (its process has ended: no waiting for its heartbeat to time
    out), and re-sends no answered request."""
    problems = 8
    killed_url = f"sqlite:///{tmp_path / 'killed.sqlite'}"
    calm_url = f"sqlite:///{tmp_path / 'calm.sqlite'}"
    killed_engine, calm_engine = get_engine(killed_url), get_engine(calm_url)
    add_problems(killed_engine, problems)
    add_problems(calm_engine, problems)

    def finished(server: OpenAIServer, *, locked: bool = False) -> list[int]:
        """Problems whose every request was answered (`locked`: called under the server's lock)."""
        count = server._completed_matching if locked else server.completed_matching
        return [i for i in range(problems) if count(f"Problem {i}:") == REQUESTS_PER_PROBLEM]

    with OpenAIServer() as server:
        # Stop once 60 answers were delivered and at least one problem is complete, so that the kill falls
        # between written candidates and cached answers of unfinished problems.
        server.hold_when(lambda s: sum(s.completed.values()) >= 60 and bool(finished(s, locked=True)))
        process = subprocess.Popen(_cli(killed_url, server), env=_env(killed_url), cwd=PROJECT_ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # Stalled at a known point: every request after it is held, every answer the client received is
            # committed, and every finished problem's candidates are written. Then kill it without warning.
            _wait_for(lambda: server.held >= 1 and server.inflight == server.held
                      and _count_calls(killed_engine) == server.total_completed()
                      and _count_candidates(killed_engine) == 4 * len(finished(server)),
                      60, "the client to stall at the hold point")
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        assert process.returncode == -signal.SIGKILL
        assert 60 <= server.total_completed() < problems * REQUESTS_PER_PROBLEM
        partial = _candidates(killed_engine, any_server=True)
        server.release()
        assert is_stale(_runs(killed_engine)[0])  # at once: its process has ended

        rerun = subprocess.run(_cli(killed_url, server), env=_env(killed_url), cwd=PROJECT_ROOT,
                               capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        assert f"run 1: resumed (its process {process.pid} on this machine has ended)" in rerun.stderr
        killed_run, = _runs(killed_engine)  # the same run, resumed: no second run beside it
        assert (killed_run.status, killed_run.message, killed_run.problems_done, killed_run.problems_total) == (
            "succeeded", None, problems, problems)
        assert "failures 0" in rerun.stdout
        assert max(server.completed.values()) == 1, "a completed request was sent twice"
        assert server.total_completed() == problems * REQUESTS_PER_PROBLEM

    with OpenAIServer() as calm_server:
        calm = subprocess.run(_cli(calm_url, calm_server), env=_env(calm_url), cwd=PROJECT_ROOT,
                              capture_output=True, text=True, timeout=120)
        assert calm.returncode == 0, calm.stderr
    final = _candidates(killed_engine, any_server=True)
    assert final == _candidates(calm_engine, any_server=True)
    assert len(final) == problems * 4
    assert len(partial) >= 4  # at least one finished problem, kept as written before the kill
    assert all(final[data_id] == row for data_id, row in partial.items())


def _runs(engine: Engine) -> list[GenerationRun]:
    with read_session(engine) as session:
        return list(session.execute(select(GenerationRun).order_by(GenerationRun.id)).scalars())


def test_cli_exits_non_zero_when_items_fail(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fail.sqlite'}"
    add_problems(get_engine(url), 2)
    with OpenAIServer() as server:
        server.inject("Problem 1:", *[Reply(status=503)] * 50)
        result = subprocess.run(_cli(url, server, "--max-retries", "1"), env=_env(url), cwd=PROJECT_ROOT,
                                capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "run 1: partial; 2/2 problems, 4 candidates written" in result.stdout
    assert "failures 1" in result.stdout and "HTTP 503" in result.stderr


def test_cancel_stops_a_running_run_and_keeps_finished_problems(openai_server: OpenAIServer, engine: Engine) -> None:
    add_problems(engine, 6)
    openai_server.hold_after(REQUESTS_PER_PROBLEM * 2)
    with write_session(engine) as session:
        run_id = create_run(session, options=_options(openai_server, concurrency=1), created_by="admin").id
    assert run_id is not None
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(summary=asyncio.run(execute_run(engine, run_id=run_id, poll_seconds=0.05)))
    )
    thread.start()
    _wait_for(lambda: openai_server.held >= 1, 30, "the run to reach the hold point")
    with write_session(engine) as session:
        assert request_cancel(session, run_id=run_id)
    thread.join(timeout=30)
    openai_server.release()
    assert not thread.is_alive()
    summary = result["summary"]
    assert summary.status == "cancelled"
    with read_session(engine) as session:
        run = session.get(GenerationRun, run_id)
        assert run is not None and run.status == "cancelled" and run.finished_at is not None
        assert 1 <= run.problems_done < 6
    assert len(_candidates(engine)) == 4 * summary.problems_done
    with write_session(engine) as session:
        assert not request_cancel(session, run_id=run_id)  # finished runs cannot be cancelled


def test_step_1_then_step_2_equals_both_at_once(openai_server: OpenAIServer, engine: Engine, tmp_path: Path) -> None:
    add_problems(engine, 2)
    first = run_generation(engine, options=_options(openai_server, steps=(1,)))
    assert first.status == "succeeded" and first.calls["requests"] == 2 * 5
    # Not verified yet: they wait as unverified, outside the queue (ReliableMath Section 3.3, Steps 2-3).
    unverified = _candidates(engine)
    assert {c["status"] for c in unverified.values()} == {"unverified"}
    assert all("verification" not in c["llm_outputs"] for c in unverified.values())

    second = run_generation(engine, options=_options(openai_server, steps=(2,)))
    assert second.status == "succeeded" and second.problems == 2
    assert second.calls["requests"] == 2 * (REQUESTS_PER_PROBLEM - 5)
    verified = _candidates(engine)

    both_engine = get_engine(f"sqlite:///{tmp_path / 'both.sqlite'}")
    add_problems(both_engine, 2)
    run_generation(both_engine, options=_options(openai_server))
    both = _candidates(both_engine)
    strip = lambda rows: {  # noqa: E731  (the content hash covers the provenance, steps included)
        k: {**v, "provenance": {**v["provenance"], "steps": None, "content_sha256": None}} for k, v in rows.items()
    }
    assert strip(verified) == strip(both)


def _six_conditions(prompt: str, model: str) -> str:
    if prompt.startswith("You are an excellent extractor."):
        return "### Extracted Condition ###:\n" + "\n\n".join(f"{k}. condition {k} of the train" for k in range(1, 7))
    return scripted_answer(prompt, model)


def test_every_extracted_condition_is_rewritten_unless_capped(engine: Engine, tmp_path: Path) -> None:
    """The release has k up to 6 (`amc_75_contradict_6`): a model that lists six conditions gets six candidates
    per rewrite type; `max_conditions=3` is the Appendix I prompt's "one to three"."""
    add_problems(engine, 1)
    with OpenAIServer(_six_conditions) as server:
        summary = run_generation(engine, options=_options(server, steps=(1,), rewrite_types=("remove",)))
        assert summary.status == "succeeded"
        assert sorted(_candidates(engine)) == [f"aime_0_remove_{k}" for k in range(1, 7)]
        capped_engine = get_engine(f"sqlite:///{tmp_path / 'capped.sqlite'}")
        add_problems(capped_engine, 1)
        options = _options(server, steps=(1,), rewrite_types=("remove",), max_conditions=3)
        run_generation(capped_engine, options=options)
        assert sorted(_candidates(capped_engine)) == [f"aime_0_remove_{k}" for k in range(1, 4)]


def test_labelled_or_imported_candidates_are_left_alone_and_not_paid_for(
    openai_server: OpenAIServer, engine: Engine
) -> None:
    [problem_id] = add_problems(engine, 1)
    with write_session(engine) as session:
        session.add(Candidate(problem_id=problem_id, data_id="aime_0_remove_1", data_source="aime",
                              rewrite_type="remove", condition_index=1, rewritten_question="imported text"))
    summary = run_generation(engine, options=_options(openai_server))
    assert summary.candidates_skipped == 1 and summary.candidates_written == 3
    assert summary.calls["requests"] == REQUESTS_PER_PROBLEM - 5  # no rewrite/verify/condition/reason for it
    assert _candidates(engine)["aime_0_remove_1"]["rewritten_question"] == "imported text"


def test_bad_options_are_refused() -> None:
    server_url = "http://127.0.0.1:9/v1"
    role = RoleConfig(model="m", base_url=server_url)
    with pytest.raises(ValueError, match="steps"):
        GenerateOptions(extract=role, rewrite=role, steps=(3,))
    with pytest.raises(ValueError, match="rewrite type"):
        GenerateOptions(extract=role, rewrite=role, rewrite_types=("distract",))


def test_the_api_key_is_sent_but_stored_and_printed_nowhere(openai_server: OpenAIServer, tmp_path: Path) -> None:
    """The key reaches the endpoint, and appears in no table, no export and no CLI output."""
    secret = "sk-test-9f8e7d6c5b4a3f2e1d0c"
    url = f"sqlite:///{tmp_path / 'k.sqlite'}"
    add_problems(get_engine(url), 2)
    command = [part if part != "UNSET_TEST_KEY" else "SECRET_TEST_KEY" for part in _cli(url, openai_server)]
    result = subprocess.run(
        command, cwd=PROJECT_ROOT, env={**_env(url), "SECRET_TEST_KEY": secret}, capture_output=True, text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert openai_server.authorizations[f"Bearer {secret}"] == sum(openai_server.received.values()) > 0
    assert secret not in result.stdout + result.stderr
    export_dir = tmp_path / "exports"
    for format in ("annotation", "jsonl", "csv"):
        exported = run_forked(["export", "--format", format, "--out", str(export_dir / format)], _env(url))
        assert exported.returncode == 0, exported.stderr
    assert all(secret not in file.read_text(encoding="utf-8") for file in export_dir.rglob("*") if file.is_file())
    database = b"".join(path.read_bytes() for path in tmp_path.glob("k.sqlite*"))
    assert secret.encode() not in database
    with read_session(get_engine(url)) as session:
        assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() > 0
        assert "SECRET_TEST_KEY" in str(session.execute(select(GenerationRun.models)).scalar_one())
