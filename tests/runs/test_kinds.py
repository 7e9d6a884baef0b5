"""The kinds of run as one list: every kind has a spec of its own kind, a command that executes it, and the app
starts only kinds it knows."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs import RunError, kinds
from tests.conftest import PROJECT_ROOT


def test_every_kind_has_its_spec_and_the_list_names_every_kind() -> None:
    assert list(kinds.KINDS) == list(RunKind)
    for kind in RunKind:
        spec = kinds.spec(kind)
        assert spec.kind == kind and spec.units == f"{spec.unit}s"
        assert callable(spec.create) and callable(spec.describe) and callable(spec.execute)
        assert hasattr(spec.options, "from_run") and hasattr(spec.options, "roles")
    assert [spec.kind for spec in kinds.specs()] == list(RunKind)


def test_a_kind_it_does_not_know_is_refused_by_name() -> None:
    with pytest.raises(RunError, match="unknown kind of run 'summon'"):
        kinds.spec("summon")
    with pytest.raises(RunError, match="run 7 is of an unknown kind 'summon'"):
        kinds.command("summon", run_id=7)
    assert kinds.command(RunKind.evaluate, run_id=7) == ["worker", "--once", "--run-id", "7", "--kinds", "evaluate"]


def test_every_kind_is_a_command_that_executes_a_queued_run() -> None:
    from typer.main import get_command

    from annotator.cli import app

    commands = get_command(app).commands  # type: ignore[attr-defined]
    for kind in RunKind:
        options = {option for parameter in commands[kind].params
                   for option in [*parameter.opts, *parameter.secondary_opts]}
        assert {"--run-id", "--no-progress"} <= options, kind


def test_a_run_of_an_unknown_kind_is_failed_not_started(sqlite_engine: Engine, tmp_path: Path) -> None:
    with write_session(sqlite_engine) as session:
        run = Run(kind="summon", status=RunStatus.queued, prompt_version="v1", created_at=datetime.now(UTC))
        session.add(run)
        session.flush()
        run_id = run.id
    assert run_id is not None
    with pytest.raises(RunError, match="unknown kind 'summon'"):
        runs.start_background(sqlite_engine, run_id=run_id, log_dir=tmp_path / "logs")
    with read_session(sqlite_engine) as session:
        failed = session.get(Run, run_id)
        assert failed is not None and failed.status == RunStatus.failed and failed.pid is None
        assert failed.message == f"run {run_id} is of an unknown kind 'summon'" and failed.finished_at is not None
    assert not (tmp_path / "logs").exists()  # no log: no process


def test_listing_and_starting_runs_loads_no_kinds_code() -> None:
    script = ("import json, sys; import annotator.runs, annotator.runs.kinds; "
              "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('annotator.construction.pipeline', "
              "'annotator.transcripts', 'openai')))))")
    result = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
