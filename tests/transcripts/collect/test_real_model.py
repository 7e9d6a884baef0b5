"""Collecting transcripts from a real model: SmolLM2-135M served by `python -m llama_cpp.server`.

The model is far too small to solve these problems (it rarely boxes an answer, which gives real `unmatched`
transcripts for the judge); this checks the plumbing end to end: the ReliableMath and TreeCut prompts accepted
by a real chat template, real usage and finish reasons kept, the re-run answered without a request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import LLMCall, Transcript
from annotator.runs.llm import RoleConfig
from annotator.transcripts.collect.evaluate import run_evaluation
from annotator.transcripts.collect.options import EvaluateOptions
from tests.support.evaluation_items import VETTED, add_evaluation_items
from tests.support.llama_server import llama_server_fixture  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow


def test_collection_against_smollm2(llama_server: str, tmp_path: Path) -> None:
    engine = get_engine(f"sqlite:///{tmp_path / 'real.sqlite'}")
    add_evaluation_items(engine)
    options = EvaluateOptions(
        model=RoleConfig(model="smollm2", base_url=llama_server, api_key_env="UNSET_TEST_KEY", max_tokens=64,
                         timeout=300),
        prompt="reliable", concurrency=2, max_retries=1,
    )

    summary = run_evaluation(engine, options=options)

    assert summary.status == "succeeded", summary.errors
    assert summary.written == len(VETTED) and summary.calls["requests"] == len(VETTED)
    with read_session(engine) as session:
        rows = session.execute(select(Transcript).order_by(Transcript.id)).scalars().all()
        calls = {call.key: call for call in session.execute(select(LLMCall)).scalars()}
    # Two requests at a time: the answers arrive (and are stored) in any order.
    assert sorted(row.data_id for row in rows) == sorted(VETTED)
    for row in rows:
        assert row.model == "smollm2" and row.prompt == "reliable" and row.run_id == summary.run_id
        assert row.finish_reason in ("stop", "length") and row.prompt_tokens and row.completion_tokens
        assert row.completion_tokens <= 64
    # Every transcript is the answer its request got (the call cache holds the same text).
    assert sorted(row.response for row in rows) == sorted(call.content for call in calls.values())
    unboxed = sum("\\boxed" not in row.response for row in rows)
    print(f"{unboxed}/{len(rows)} responses without a boxed answer; {summary.calls}")

    again = run_evaluation(engine, options=options)
    assert again.calls["requests"] == 0 and again.skipped == len(VETTED)


def test_llm_judge_against_smollm2(llama_server: str, tmp_path: Path) -> None:
    """The judge prompt through a real chat template: every transcript ends as a stored verdict with its reason or
    as an unreadable reply kept in the run's errors, and a run started again asks nothing. (A 135M model mostly
    restates the reference instead of the two lines: here it checks the plumbing and the strict reading, not
    the model's judgement.)"""
    from annotator.database.models import Judgement
    from annotator.transcripts.judge.llm import run_judge
    from annotator.transcripts.judge.llm_options import JudgeOptions
    from tests.support.llm_judge import SPECS, add_judged_transcripts

    engine = get_engine(f"sqlite:///{tmp_path / 'judge.sqlite'}")
    ids = add_judged_transcripts(engine)
    options = JudgeOptions(
        model=RoleConfig(model="smollm2", base_url=llama_server, api_key_env="UNSET_TEST_KEY", max_tokens=48,
                         timeout=300),
        concurrency=2, max_retries=1,
    )

    summary = run_judge(engine, options=options)

    assert summary.failures == 0 and summary.calls["requests"] == len(SPECS) == summary.done
    assert summary.judged + summary.unreadable == len(SPECS)
    assert summary.status == ("succeeded" if summary.unreadable == 0 else "partial")
    with read_session(engine) as session:
        judgements = session.execute(select(Judgement)).scalars().all()
        calls = {call.content for call in session.execute(select(LLMCall)).scalars()}
        verdicts = dict(session.execute(select(Transcript.id, Transcript.judge_rule)).all())
    assert len(judgements) == summary.judged and all(j.verdict in "SRF" and j.reason for j in judgements)
    assert {verdicts[j.transcript_id] for j in judgements} <= {"llm"}
    # A reply that is no verdict leaves the transcript's verdict as it was (the rule set's).
    assert {verdicts[e["transcript_id"]] for e in summary.errors} <= {"reliablemath"}
    assert all(error["kind"] == "unparseable" and error["reply"] in calls for error in summary.errors)
    assert sorted([j.transcript_id for j in judgements] + [e["transcript_id"] for e in summary.errors]) == ids
    print(f"smollm2 as judge: {summary.verdicts}, {summary.unreadable} unreadable; {summary.calls}")

    again = run_judge(engine, options=options)
    assert again.calls["requests"] == 0 and again.skipped == summary.judged
