"""`python -m annotator generate` starts at once: the pipeline, the client and pandas load when it runs."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select

from annotator.cli.generate import generate
from annotator.construction.pipeline import DEFAULT_VERSION
from annotator.database.engine import get_engine, read_session
from annotator.database.models import Run
from annotator.runs.llm import DEFAULT_API_KEY_ENV
from tests.conftest import PROJECT_ROOT
from tests.support.heavy_imports import heavy_imports

HEAVY = ("openai", "pandas", "tqdm", "annotator.construction.pipeline", "annotator.runs.llm", "annotator.runs")


def test_the_command_module_imports_nothing_heavy() -> None:
    assert heavy_imports("annotator.cli.generate", HEAVY) == []


def test_the_written_out_defaults_are_the_libraries() -> None:
    parameters = inspect.signature(generate).parameters
    assert parameters["api_key_env"].default == DEFAULT_API_KEY_ENV
    assert parameters["prompt_version"].default == DEFAULT_VERSION


def test_a_prompt_version_that_does_not_exist_is_refused_in_one_line_and_creates_no_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'g.sqlite'}"
    result = subprocess.run(
        [sys.executable, "-m", "annotator", "generate", "--extract-model", "m-i", "--rewrite-model", "m-r",
         "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "UNSET_TEST_KEY", "--prompt-version", "v99"],
        cwd=PROJECT_ROOT, env={**os.environ, "ANNOTATOR_DATABASE_URL": url}, capture_output=True, text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and "v99" in result.stderr and len(result.stderr.splitlines()) == 1
    with read_session(get_engine(url)) as session:
        assert session.execute(select(func.count()).select_from(Run)).scalar_one() == 0
