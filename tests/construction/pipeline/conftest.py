from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.database.models import Problem
from tests.support.openai_server import OpenAIServer

# Answers of every JSON type the release has: str (aime, math), float (amc), list of str (minerva).
GROUND_TRUTHS = ["204", 142.0, ["9.6\n"], "\\frac{1}{2}"]


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


def add_problems(engine: Engine, count: int, *, source: str = "aime") -> list[int]:
    with write_session(engine) as session:
        problems = [
            Problem(
                data_source=source, position=i, source_id=100 + i,
                question=f"Problem {i}: a train travels {10 + i} km in {i + 1} hours. What is its speed in km/h?",
                ground_truth=GROUND_TRUTHS[i % len(GROUND_TRUTHS)],
            )
            for i in range(count)
        ]
        session.add_all(problems)
        session.flush()
        return [p.id for p in problems if p.id is not None]
