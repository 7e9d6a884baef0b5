"""Rows as stored, to compare two runs or count what a run kept."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Transcript


def transcripts(engine: Engine) -> dict[tuple[str, str, int], dict[str, Any]]:
    """(data_id, prompt, sample) -> the row, without what differs between two equal runs (ids, times, run)."""
    with read_session(engine) as session:
        rows = session.execute(select(Transcript)).scalars()
        return {(t.data_id, t.prompt, t.sample): t.model_dump(exclude={"id", "created_at", "run_id"}) for t in rows}


def count_rows(engine: Engine, table: Any) -> int:
    with read_session(engine) as session:
        return session.execute(select(func.count()).select_from(table)).scalar_one()
