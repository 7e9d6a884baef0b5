"""The annotator command line in a child process, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import PROJECT_ROOT


def run_cli(db_url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m annotator ARGS` on database `db_url`, given `stdin` as its input."""
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": db_url}
    return subprocess.run(
        [sys.executable, "-m", "annotator", *args],
        input=stdin,
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

