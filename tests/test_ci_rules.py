"""The suite's own rule: a missing required component skips locally and fails under CI=true."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import PROJECT_ROOT

CASES = {
    "postgres": (
        {"ANNOTATOR_PG_BINDIR": "/nonexistent"},
        "tests/formats/test_reliablemath.py::test_reimport_is_a_no_op[postgres]",
        "cannot start PostgreSQL",
    ),
    "shared data": (
        {"ANNOTATOR_SHARED_DATA": "/nonexistent"},
        "tests/formats/test_reliablemath.py::test_reimport_is_a_no_op[sqlite]",
        "the shared public data is not at /nonexistent",
    ),
}


@pytest.mark.parametrize("component", sorted(CASES))
@pytest.mark.parametrize("ci", ["true", ""])
def test_missing_component(component: str, ci: str) -> None:
    env_changes, test_id, reason = CASES[component]
    env = {**os.environ, **env_changes, "CI": ci}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test_id],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if ci:
        assert result.returncode == 1, result.stdout
        assert "required component missing under CI=true" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "1 skipped" in result.stdout
    assert reason in result.stdout
