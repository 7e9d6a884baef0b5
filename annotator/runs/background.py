"""Starting a queued run in a process of its own, so that it outlives the page that asked for it: unless a worker
serves its kind (`start`), a worker for that one run (`python -m annotator worker --once --run-id N`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine, update

from annotator.database.engine import PROJECT_ROOT, read_session, write_session
from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import RunStatus
from annotator.runs.health import serving
from annotator.runs.lifecycle import RunError
from annotator.runs.spec import command


def start(engine: Engine, *, run_id: int, log_dir: Path | None = None) -> int | None:
    """Leave queued run `run_id` to the workers when a live one serves its kind (returns None), else start a process
    for it (`start_background`, returns its pid): one machine needs no worker of its own."""
    with read_session(engine) as session:
        run = session.get(Run, run_id)
        if run is not None and run.status == RunStatus.queued and serving(session, kind=run.kind):
            return None
    return start_background(engine, run_id=run_id, log_dir=log_dir)


def start_background(engine: Engine, *, run_id: int, log_dir: Path | None = None) -> int:
    """Execute queued run `run_id` in a new process (`python -m annotator worker --once --run-id N`,
    `spec.command`); returns its pid.

    The pid is stored on the run at once, so that a process which dies before it claims the run is seen
    as stale (`annotator.runs.stale_reason`) instead of leaving the run queued for ever. The process
    outlives the page's rerun and the browser tab. It inherits the server's environment, so the API key
    variable named in the run is read there; the database URL goes through the environment too, never the
    command line (which other users can see).

    Raises:
        RunError: when there is no such queued run, or the process cannot be started (the run is then
            marked failed: also a run of a kind this version does not know).
    """
    with write_session(engine) as session:
        run = session.get(Run, run_id)
        if run is None or run.status != RunStatus.queued:
            raise RunError(f"no queued run {run_id}")
        kind = run.kind
    try:
        arguments = command(kind, run_id=run_id)
    except RunError as exc:
        _mark(engine, run_id, status=RunStatus.failed, message=str(exc), finished_at=utcnow())
        raise
    url = engine.url.render_as_string(hide_password=False)
    path = log_path(engine, run_id=run_id, log_dir=log_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "annotator", *arguments],
                cwd=PROJECT_ROOT, env={**os.environ, "ANNOTATOR_DATABASE_URL": url},
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
    except OSError as exc:
        _mark(engine, run_id, status=RunStatus.failed, message=f"could not start its process: {exc}",
              finished_at=utcnow())
        raise RunError(f"run {run_id}: could not start its process: {exc}") from exc
    # The process writes the same pid when it claims the run; a run it has claimed already is left alone.
    _mark(engine, run_id, pid=process.pid)
    return process.pid


def log_path(engine: Engine, *, run_id: int, log_dir: Path | None = None) -> Path:
    """Where run `run_id`'s process writes its output: `runs/run-N.log` next to a SQLite file, else in the
    project's db/ folder (or in `log_dir`)."""
    if log_dir is None:
        database = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
        log_dir = (Path(database).parent if database and database != ":memory:" else PROJECT_ROOT / "db") / "runs"
    return log_dir / f"run-{run_id}.log"


def log_tail(engine: Engine, *, run_id: int, max_bytes: int = 8000) -> str | None:
    """The end of run `run_id`'s log (its last `max_bytes`, from a line start), or None when it has none here
    (started from the CLI, or on another machine)."""
    path = log_path(engine, run_id=run_id)
    try:
        with path.open("rb") as log:
            size = log.seek(0, 2)
            log.seek(max(size - max_bytes, 0))
            data = log.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    if size > max_bytes and "\n" in text:
        text = text.split("\n", 1)[1]  # a cut line is dropped
    return text


def _mark(engine: Engine, run_id: int, **values: object) -> None:
    with write_session(engine) as session:
        session.execute(update(Run).where(Run.id == run_id, Run.status == RunStatus.queued).values(**values))
