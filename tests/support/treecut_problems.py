"""TreeCut problems to import, and counting what an import stored."""

from __future__ import annotations

from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Candidate, Problem

ANSWERABLE = "qa_theme-food_compositeName_True_numVars-4_ansDepth-2_order-random_hallu-False_REP-500.jsonl"


def counts(engine: Engine) -> tuple[int, int]:
    with read_session(engine) as session:
        problems = session.execute(select(func.count()).select_from(Problem)).scalar_one()
        candidates = session.execute(select(func.count()).select_from(Candidate)).scalar_one()
    return problems, candidates
