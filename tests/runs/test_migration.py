"""Migration 0004: generation runs become runs of a kind, and users keep the runs they had."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from annotator.construction.pipeline import GenerateOptions
from annotator.database.engine import _alembic_config, read_session, write_session
from annotator.database.models import Run
from annotator.database.vocabulary import RunKind, RunStatus

ROW = {
    "status": "partial", "steps": "1,2", "prompt_version": "v1",
    "models": '{"extract": {"model": "m-i", "base_url": null, "api_key_env": "OPENAI_API_KEY", "temperature": 0.0,'
              ' "max_tokens": null, "extra_body": null, "timeout": 600.0}, "rewrite": {"model": "m-r",'
              ' "base_url": null, "api_key_env": "OPENAI_API_KEY", "temperature": 0.0, "max_tokens": null,'
              ' "extra_body": null, "timeout": 600.0}}',
    "options": '{"source": "aime", "limit": 3, "concurrency": 4}', "problems_total": 3, "problems_done": 3,
    "candidates_written": 11, "candidates_filtered": 1, "requests": 57, "cache_hits": 2, "retries": 1,
    "failures": 1, "unparseable": 0, "prompt_tokens": 1234, "completion_tokens": 567,
    "errors": '[{"step": "rewrite", "error": "HTTP 503"}]', "message": None, "cancel_requested": False,
    "pid": 4242, "started_at": datetime(2026, 1, 1, 12, 0, 1), "heartbeat_at": datetime(2026, 1, 1, 12, 0, 9),
    "finished_at": datetime(2026, 1, 1, 12, 0, 9), "created_by": "boss", "created_at": datetime(2026, 1, 1, 12, 0),
}


def test_upgrade_keeps_existing_generation_runs_and_downgrade_gives_them_back(engine: Engine) -> None:
    config = _alembic_config(engine)
    command.downgrade(config, "0003_auth")
    with engine.begin() as conn:
        conn.execute(text(f"INSERT INTO generationrun ({', '.join(ROW)}) VALUES ({', '.join(':' + k for k in ROW)})"),
                     ROW)
    command.upgrade(config, "heads")
    assert "generationrun" not in inspect(engine).get_table_names()

    with read_session(engine) as session:
        run = session.get(Run, 1)
        assert run is not None and run.kind == RunKind.generate and run.counters is None
        assert (run.status, run.problems_done, run.candidates_written, run.failures, run.created_by) == (
            RunStatus.partial, 3, 11, 1, "boss")
        assert run.errors == [{"step": "rewrite", "error": "HTTP 503"}]
        assert run.created_at.replace(tzinfo=UTC) == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        options = GenerateOptions.from_run(run)
        assert (options.extract.model, options.rewrite.model, options.source) == ("m-i", "m-r", "aime")
    with write_session(engine) as session:  # new runs continue the ids (on PostgreSQL: the renamed sequence)
        run = Run(kind=RunKind.generate, prompt_version="v1")
        session.add(run)
        session.flush()
        assert run.id == 2

    command.downgrade(config, "0003_auth")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, candidates_written, created_by FROM generationrun ORDER BY id")).all()
    assert [tuple(row) for row in rows] == [(1, 11, "boss"), (2, 0, None)]
    command.upgrade(config, "heads")
