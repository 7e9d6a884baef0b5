"""`annotator app` (= `python -m annotator app`): the web app started through the CLI, its arguments passed to
`streamlit run`, the database checked first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from annotator.database.engine import PROJECT_ROOT
from tests.support.ports import start_listening
from tests.support.waiting import wait_for


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def test_the_app_command_starts_the_server_with_streamlits_arguments(tmp_path: Path) -> None:
    database, log = tmp_path / "app.sqlite", tmp_path / "app.log"
    # From another folder, the package found as an installed one would be: app.py is found from the package.
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{database}", "PYTHONPATH": str(PROJECT_ROOT)}

    def launch(port: int) -> subprocess.Popen[bytes]:
        with log.open("wb") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "annotator", "app", "--server.port", str(port), "--server.headless", "true"],
                cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            )

    server, port = start_listening(launch, log, what="annotator app")  # the port given reached streamlit
    try:
        wait_for(lambda: _healthy(port) or server.poll() is not None, 60, "the app to answer")
        assert server.poll() is None and _healthy(port)
        assert database.exists()  # created and migrated before the server started
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert "Traceback" not in log.read_text()
