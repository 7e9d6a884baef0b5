"""`annotator app` (= `python -m annotator app`): the web app started through the CLI, its arguments passed to
`streamlit run`, the database and the `ANNOTATOR_*` settings checked first; `streamlit run server.py` itself
refuses to start on a bad setting."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from annotator.database.engine import PROJECT_ROOT
from tests.support.ports import candidate_port, start_listening
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
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{database}", "PYTHONPATH": str(PROJECT_ROOT),
           "ANNOTATOR_SESSION_HOURS": "0.5", "ANNOTATOR_PAGE_BUSY_SECONDS": "1"}

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



BAD = ("ANNOTATOR_SESSION_HOURS", "soon", "a number of hours from 0.1 to 8,760")


def test_the_app_command_refuses_a_bad_setting_before_it_starts_the_server(tmp_path: Path) -> None:
    name, value, allowed = BAD
    database = tmp_path / "app.sqlite"
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{database}", name: value}
    done = subprocess.run([sys.executable, "-m", "annotator", "app", "--server.port", str(candidate_port()),
                           "--server.headless", "true"], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {name}={value!r}: {allowed}\n")
    assert not database.exists()


def test_the_server_refuses_to_start_on_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    """`streamlit run server.py` (how every app server of a deployment starts): the last line says which variable,
    and no traceback."""
    database = tmp_path / "app.sqlite"
    for name, value, allowed in (BAD, ("ANNOTATOR_HEARTBEAT_TIMEOUT", "-1", "a number of seconds from 0.5 to 86,400")):
        env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{database}", name: value}
        command = [sys.executable, "-m", "streamlit", "run", "server.py", "--server.port", str(candidate_port()),
                   "--server.headless", "true"]
        done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        assert done.stderr.splitlines()[-1] == f"error: {name}={value!r}: {allowed}"
    assert not database.exists()
