"""The whole pipeline against a real model: SmolLM2-135M served by `python -m llama_cpp.server`.

The model is far too small to rewrite math problems well; this checks the plumbing end to end: real
requests and usage, answers parsed or recorded as unparseable, everything stored, nothing crashed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from annotator.construction.pipeline import GenerateOptions, run_generation
from annotator.database.engine import get_engine, read_session
from annotator.database.models import Candidate, LLMCall
from annotator.database.models import Run as GenerationRun
from annotator.runs.llm import RoleConfig
from tests.construction.pipeline.conftest import add_problems
from tests.support.llama_server import llama_server_fixture  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow


def test_pipeline_against_smollm2(llama_server: str, tmp_path: Path) -> None:
    engine = get_engine(f"sqlite:///{tmp_path / 'real.sqlite'}")
    add_problems(engine, 2)
    role = RoleConfig(model="smollm2", base_url=llama_server, api_key_env="UNSET_TEST_KEY", max_tokens=160,
                      timeout=300)
    options = GenerateOptions(extract=role, rewrite=role, concurrency=2, rewrite_types=("remove",), max_retries=1)

    summary = run_generation(engine, options=options)

    assert summary.status == "succeeded", summary.errors  # no transport failure; poor answers are not failures
    assert summary.problems_done == 2
    assert summary.calls["requests"] >= 2 and summary.calls["completion_tokens"] > 0
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(LLMCall)).scalar_one() == summary.calls["requests"]
        run = session.get(GenerationRun, summary.run_id)
        assert run is not None and run.status == "succeeded" and run.problems_done == 2
        candidates = session.execute(select(Candidate)).scalars().all()
        problems_with_candidates = {c.problem_id for c in candidates}
        # Every problem either produced candidates or has its unreadable extraction recorded on the run.
        unreadable = {e["problem_id"] for e in run.errors or [] if e["kind"] == "unparseable"}
        assert len(problems_with_candidates) + len(unreadable) == 2
        for candidate in candidates:
            outputs = candidate.llm_outputs or {}
            assert outputs["extraction"]["content"] and outputs["rewrite"]["content"]
            assert candidate.provenance["models"]["rewrite"]["model"] == "smollm2"
            if candidate.rewritten_question:
                assert "verification" in outputs and "unsolvable" in outputs
                passed = outputs["verification"]["verdict"] is True and outputs["unsolvable"]["verdict"] is True
                assert candidate.status == ("pending" if passed else "filtered")
            else:
                assert candidate.status == "filtered" and outputs["parse_errors"][0]["step"] == "rewrite"
        print(json.dumps(summary.calls), f"{len(candidates)} candidates", f"{len(unreadable)} unreadable extractions")
