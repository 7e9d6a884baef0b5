"""Generation runs seen from the app: start one in the background, list them, tell a dead one from a live one."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotator.db import PROJECT_ROOT
from annotator.models import GenerationRun, utcnow
from annotator.pipeline.generate import ACTIVE_STATUSES

# A running run writes its counters every second or so; one silent this long has died (killed, crashed).
STALE_AFTER = timedelta(seconds=60)


def start_background(engine: Engine, *, run_id: int, log_dir: Path | None = None) -> int:
    """Execute queued run `run_id` in a new process (`python -m annotator generate --run-id`); returns its pid.

    The process outlives the page's rerun and the browser tab. It inherits the server's environment, so
    the API key variable named in the run is read there; the database URL goes through the environment
    too, never the command line (which other users can see).
    """
    url = engine.url.render_as_string(hide_password=False)
    if log_dir is None:  # next to a SQLite file, else in the project's db/ folder
        database = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
        log_dir = (Path(database).parent if database and database != ":memory:" else PROJECT_ROOT / "db") / "runs"
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / f"run-{run_id}.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "annotator", "generate", "--run-id", str(run_id), "--no-progress"],
            cwd=PROJECT_ROOT, env={**os.environ, "ANNOTATOR_DATABASE_URL": url},
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    return process.pid


def recent_runs(session: Session, *, limit: int = 20) -> list[GenerationRun]:
    return list(session.execute(select(GenerationRun).order_by(GenerationRun.id.desc()).limit(limit)).scalars())


def is_stale(run: GenerationRun, *, now: datetime | None = None) -> bool:
    """A run that says it is running but has not written its counters for `STALE_AFTER`."""
    if run.status != "running":
        return False
    beat = run.heartbeat_at or run.started_at or run.created_at
    if beat.tzinfo is None:
        beat = beat.replace(tzinfo=UTC)
    return (now or utcnow()) - beat > STALE_AFTER


def describe(run: GenerationRun) -> dict[str, Any]:
    """One row of the runs table, as plain values (the key itself is never stored, only its variable's name)."""
    models = run.models or {}
    return {
        "run": run.id,
        "status": "stale (process gone?)" if is_stale(run) else run.status,
        "problems": f"{run.problems_done}/{run.problems_total}",
        "candidates": run.candidates_written,
        "filtered": run.candidates_filtered,
        "requests": run.requests,
        "cache hits": run.cache_hits,
        "retries": run.retries,
        "failures": run.failures,
        "unparseable": run.unparseable,
        "tokens in/out": f"{run.prompt_tokens}/{run.completion_tokens}",
        "M_I": (models.get("extract") or {}).get("model"),
        "M_R": (models.get("rewrite") or {}).get("model"),
        "prompts": run.prompt_version,
        "steps": run.steps,
        "by": run.created_by,
        "started": run.started_at,
        "finished": run.finished_at,
    }


def is_active(run: GenerationRun) -> bool:
    return run.status in ACTIVE_STATUSES and not is_stale(run)
