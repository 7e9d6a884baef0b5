"""Collecting transcripts (an evaluate run) against a real local OpenAI-compatible server, ReliableMath Section 4:
every item of the A and U sets asked with the Fig. 14/15 prompt, answers kept, faults survived, nothing asked twice."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from sqlalchemy import Engine, delete

from annotator.database.engine import read_session, write_session
from annotator.database.models import LLMCall, Run, Transcript
from annotator.runs import RunError, request_cancel
from annotator.runs.llm import RoleConfig
from annotator.transcripts.collect.evaluate import collected_ids, create_run, execute_run, run_evaluation
from annotator.transcripts.collect.options import EvaluateOptions
from annotator.transcripts.collect.prompts import messages
from tests.support.evaluation_items import (
    TREECUT_QUESTION,
    UNVETTED,
    VETTED,
    add_evaluation_items,
    scripted_solver,
)
from tests.support.openai_server import OpenAIServer, Reply, prompt_hash
from tests.support.stored_rows import count_rows, transcripts
from tests.support.waiting import wait_for


def _options(server: OpenAIServer, *, timeout: float = 60.0, model: str = "m-x", **kwargs: Any) -> EvaluateOptions:
    defaults: dict[str, Any] = {"concurrency": 4, "backoff_base": 0.01, "max_retries": 3, "prompt": "reliable"}
    return EvaluateOptions(
        model=RoleConfig(model=model, base_url=server.url, api_key_env="UNSET_TEST_KEY", timeout=timeout),
        **{**defaults, **kwargs},
    )


@pytest.fixture
def server() -> Any:
    with OpenAIServer(answer=scripted_solver) as running:
        yield running


def test_every_item_and_sample_is_asked_once_and_kept(server: OpenAIServer, engine: Engine) -> None:
    add_evaluation_items(engine)
    # Both samples of aime_1 (which of the two arrives first is up to the scheduler) answer with reasoning.
    server.inject("Problem 1: a train", *[Reply(content="\\boxed{7}", reasoning_content="Think: 77 / 11 = 7.")] * 2)
    summary = run_evaluation(engine, options=_options(server, samples=2))

    assert summary.status == "succeeded", summary.errors
    assert (summary.responses, summary.done, summary.written, summary.skipped) == (18, 18, 18, 0)
    assert summary.calls["requests"] == 18 and summary.calls["cache_hits"] == 0
    # Two samples of an item are two requests (sample 1 carries a seed), with the same messages.
    assert sorted(server.received.values()) == [2] * 9 and count_rows(engine, LLMCall) == 18
    rows = transcripts(engine)
    assert sorted(rows) == sorted((data_id, "reliable", s) for data_id in VETTED for s in (0, 1))

    solvable = rows[("aime_1", "reliable", 0)]
    assert solvable["response"] == "\\boxed{7}" and solvable["reasoning"] == "Think: 77 / 11 = 7."
    assert (solvable["model"], solvable["source"], solvable["candidate_id"], solvable["finish_reason"]) == (
        "m-x", "evaluate", None, "stop")
    assert solvable["prompt_tokens"] > 0 and solvable["completion_tokens"] == 1
    assert solvable["params"] == {"temperature": 0.0, "template": "reliablemath"}
    assert rows[("aime_1", "reliable", 1)]["reasoning"] == "Think: 77 / 11 = 7."
    assert rows[("aime_1", "reliable", 1)]["params"] == {
        "temperature": 0.0, "extra_body": {"seed": 1}, "template": "reliablemath"}
    # Judged as they come (ReliableMath's rule; TreeCut's on the TreeCut item): its right answer is a success.
    assert {row["judge_rule"] for row in rows.values()} == {"reliablemath"}

    unsolvable = rows[("math_0_remove_1", "reliable", 0)]
    assert unsolvable["candidate_id"] is not None and unsolvable["response"].startswith("Step by step (m-x)")
    # What was sent is the Fig. 15 prompt with the rewritten question; TreeCut's item got TreeCut's prompt.
    rewritten = "Problem math 0: let $x > 0$. Find $x^2$."
    assert server.received[prompt_hash(messages(rewritten, prompt="reliable"))] == 2
    assert server.received[prompt_hash(messages(TREECUT_QUESTION, prompt="reliable", treecut=True))] == 2
    treecut = rows[("treecut_0", "reliable", 0)]
    assert treecut["response"].endswith("Answer: 7") and treecut["params"]["template"] == "treecut"
    assert (treecut["judge_class"], treecut["judge"]) == ("correct", "S")
    with read_session(engine) as session:
        assert len(collected_ids(session, run_id=summary.run_id)) == 18
        run = session.get(Run, summary.run_id)
        assert run is not None and (run.kind, run.status, run.prompt_version) == ("evaluate", "succeeded", "reliable")
        assert (run.problems_total, run.problems_done, run.requests) == (18, 18, 18)
        assert run.counters == {"transcripts_written": 18, "transcripts_skipped": 0, "solvable_items": 7,
                                "unsolvable_items": 2}
        assert run.models["model"]["api_key_env"] == "UNSET_TEST_KEY"

    # The same settings again: every item has its transcripts, nothing is asked, nothing looked up.
    again = run_evaluation(engine, options=_options(server, samples=2))
    assert again.status == "succeeded" and (again.responses, again.skipped, again.written) == (0, 18, 0)
    assert again.calls["requests"] == 0 and again.calls["cache_hits"] == 0
    assert transcripts(engine) == rows

    # Transcripts gone (deleted by hand): the call cache answers every request, nothing is sent.
    with write_session(engine) as session:
        session.execute(delete(Transcript))
    restored = run_evaluation(engine, options=_options(server, samples=2))
    assert restored.calls["requests"] == 0 and restored.calls["cache_hits"] == 18 and restored.written == 18
    assert transcripts(engine) == rows

    # `all` adds the unvetted candidate; a third sample adds one request per item; the standard prompt is new.
    more = run_evaluation(engine, options=_options(server, samples=3, item_set="all"))
    assert (more.skipped, more.written, more.calls["requests"]) == (18, 9 + 3, 9 + 3)
    unvetted = {key for key in transcripts(engine) if key[0] in UNVETTED}
    assert unvetted == {(UNVETTED[0], "reliable", s) for s in range(3)}
    standard = run_evaluation(engine, options=_options(server, prompt="standard", limit=2))
    assert (standard.written, standard.calls["requests"]) == (2, 2)
    asked = sorted(key[0] for key in transcripts(engine) if key[1] == "standard")
    assert (standard.solvable_items, standard.unsolvable_items) == (1, 1)  # one of each set, not two solvable
    assert asked[0] in VETTED[:7] and asked[1] in VETTED[7:]


def test_data_source_and_limit_choose_the_items(server: OpenAIServer, engine: Engine) -> None:
    """The math source has 3 solvable and 2 vetted unsolvable items: a limit of 4 takes them in proportion (4 x
    3/5 = 2.4: 2 and 2), the solvable ones drawn with the seed."""
    add_evaluation_items(engine)
    summary = run_evaluation(engine, options=_options(server, data_source="math", limit=4))
    assert summary.status == "succeeded" and summary.written == 4
    assert (summary.solvable_items, summary.unsolvable_items) == (2, 2)
    assert "items: 2 solvable, 2 unsolvable" in summary.text()
    asked = {key[0] for key in transcripts(engine)}
    solvable = asked - {"math_0_remove_1", "math_1_contradict_1"}
    assert len(solvable) == 2 and solvable < {"math_0", "math_1", "math_2"}


def test_faults_are_retried_recorded_and_only_what_failed_is_asked_again(server: OpenAIServer, engine: Engine) -> None:
    add_evaluation_items(engine)
    server.inject("Problem 0: a train", Reply(status=429, headers={"Retry-After": "0.05"}))
    server.inject("Problem 1: a train", Reply(drop=True), Reply(delay=2))  # dropped, then past the timeout
    server.inject("Problem 2: a train", *[Reply(status=500)] * 4)  # 1 + 3 retries: fails for good
    server.inject("Problem math 1:", Reply(body=b"not json"))  # a 200 that is not a completion
    summary = run_evaluation(engine, options=_options(server, timeout=1.0))

    assert summary.status == "partial"
    assert (summary.failures, summary.written, summary.done) == (2, 7, 9)
    # 429 once, a drop and a timeout, 3 retries of the 500s (more only if this busy machine stalls a request;
    # a stalled retry of a 500 counts as a timeout instead).
    reasons = summary.retry_reasons
    assert reasons["rate_limit"] == 1 and reasons["server_error"] in (2, 3) and summary.calls["retries"] >= 1 + 2 + 3
    assert any(r.startswith("connection") for r in reasons) and any(r.startswith("timeout") for r in reasons)
    failed = {(e["data_id"], e["kind"]) for e in summary.errors}
    assert failed == {("aime_2", "server_error"), ("math_1", "bad_response")}
    assert set(VETTED) - {key[0] for key in transcripts(engine)} == {"aime_2", "math_1"}
    with read_session(engine) as session:
        run = session.get(Run, summary.run_id)
        assert run is not None and run.status == "partial" and run.failures == 2 and len(run.errors) == 2

    completed_before = dict(server.completed)
    rerun = run_evaluation(engine, options=_options(server, timeout=1.0))
    assert rerun.status == "succeeded" and (rerun.skipped, rerun.written) == (7, 2)
    assert rerun.calls["requests"] - rerun.calls["retries"] == 2 and rerun.calls["cache_hits"] == 0
    # The unreadable answer was delivered (and is asked again); every answer that was read is not.
    garbage = prompt_hash(messages("Problem math 1: let $x > 1$. Find $x^2$ when $x = 2$.", prompt="reliable"))
    assert server.completed[garbage] == completed_before.pop(garbage) + 1
    assert all(server.completed[key] == count for key, count in completed_before.items()), "sent again"
    assert {key[0] for key in transcripts(engine)} == set(VETTED)


def test_cancel_stops_a_running_run_and_keeps_what_it_collected(server: OpenAIServer, engine: Engine) -> None:
    add_evaluation_items(engine)
    server.hold_after(3)
    with write_session(engine) as session:
        run_id = create_run(session, options=_options(server, concurrency=1), created_by="admin").id
    assert run_id is not None
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(summary=asyncio.run(execute_run(engine, run_id=run_id, poll_seconds=0.05)))
    )
    thread.start()
    # Held after 3 answers, each of them kept as a transcript: then the cancel.
    wait_for(lambda: server.held >= 1 and count_rows(engine, Transcript) == 3, 30, "the run to reach the hold point")
    with write_session(engine) as session:
        assert request_cancel(session, run_id=run_id)
    thread.join(timeout=30)
    server.release()
    assert not thread.is_alive()
    summary = result["summary"]
    assert summary.status == "cancelled" and summary.written == 3 and summary.done == 3
    assert sorted(key[0] for key in transcripts(engine)) == VETTED[:3]
    with read_session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None and run.status == "cancelled" and run.finished_at is not None


def test_bad_options_are_refused() -> None:
    role = RoleConfig(model="m", base_url="http://127.0.0.1:9/v1")
    for bad, match in [({"prompt": "std"}, "standard or reliable"), ({"item_set": "some"}, "vetted or all"),
                       ({"samples": 0}, "samples"), ({"concurrency": 0}, "concurrency"), ({"limit": -1}, "limit")]:
        with pytest.raises(RunError, match=match):
            EvaluateOptions(model=role, **bad)
