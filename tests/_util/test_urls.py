"""An endpoint's base URL is checked without loading the LLM client: `--base-url`'s usage error comes at once."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from annotator._util.urls import url_problem
from tests.conftest import PROJECT_ROOT


@pytest.mark.parametrize(("url", "problem"), [
    ("http://127.0.0.1:8000/v1", None),
    ("https://api.example.org", None),
    ("ftp://example.org", "is not an http:// or https:// URL with a host"),
    ("http:///v1", "is not an http:// or https:// URL with a host"),
    ("127.0.0.1:8000", "is not an http:// or https:// URL with a host"),
    ("http://example.org:99999", "is not a URL (Port out of range 0-65535)"),
    ("http://example.org:port", "is not a URL (Port could not be cast to integer value as 'port')"),
])
def test_a_base_url_is_http_with_a_host_and_a_port_in_range(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


def test_a_bad_base_url_is_refused_before_the_llm_client_is_loaded(tmp_path: object) -> None:
    """A fresh process (what its imports cost shows only there): the usage error, and no openai imported."""
    done = subprocess.run(
        [sys.executable, "-m", "annotator", "evaluate", "--base-url", "ftp://example.org"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite", "PYTHONPROFILEIMPORTTIME": "1"},
    )
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.returncode == 2 and "Invalid value for '--base-url'" in done.stderr
    assert "annotator.cli" in imported and "openai" not in imported and "annotator.runs.llm" not in imported
