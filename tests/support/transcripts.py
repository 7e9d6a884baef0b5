"""Put judged transcripts into a real database for review, page and browser tests.

The collection and judging code lives elsewhere; these rows carry judge fields as the judge would fill them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, insert, select

from annotator.db import write_session
from annotator.models import Candidate, Problem, Transcript, utcnow
from tests.support.candidates import add_candidates

# What a judge gives each class on an unsolvable item (ReliableMath Table 1).
UNSOLVABLE_VERDICTS = {"unsolvable": "S", "unknown": "R", "correct": "F", "incorrect": "F", "unmatched": "F"}


def add_transcripts(
    engine: Engine, specs: list[dict[str, Any]], *, data_source: str = "math", start: int = 0
) -> list[int]:
    """One candidate (and its problem) per spec, and one transcript of each, on the candidate or, with
    `"solvable": True`, on its problem; returns the transcript ids in order.

    A spec may set any `Transcript` column; `judge_class` defaults to "incorrect" and `judge` to the verdict
    the class gives on an unsolvable item (on a solvable one, set `judge` yourself).
    """
    candidate_ids = add_candidates(engine, len(specs), data_source=data_source, start=start)
    now = utcnow()
    with write_session(engine) as session:
        candidates = {
            row.id: row
            for row in session.execute(
                select(Candidate.id, Candidate.data_id, Candidate.problem_id, Problem.data_source, Problem.position)
                .join(Problem, Problem.id == Candidate.problem_id)
                .where(Candidate.id.in_(candidate_ids))
            )
        }
        rows = []
        for candidate_id, spec in zip(candidate_ids, specs):
            spec = dict(spec)
            candidate = candidates[candidate_id]
            solvable = spec.pop("solvable", False)
            judge_class = spec.setdefault("judge_class", "incorrect")
            spec.setdefault("judge", UNSOLVABLE_VERDICTS.get(judge_class) if judge_class else None)
            rows.append(
                {
                    "data_id": f"{candidate.data_source}_{candidate.position}" if solvable else candidate.data_id,
                    "problem_id": candidate.problem_id,
                    "candidate_id": None if solvable else candidate_id,
                    "model": "model-a",
                    "prompt": "standard",
                    "sample": 0,
                    "response": "The answer is $\\boxed{4}$.",
                    "extracted_answer": "4",
                    "judge_rule": "reliablemath",
                    "judge_version": "1",
                    "rules_disagree": False,
                    "source": "test",
                    "created_at": now,
                    **spec,
                }
            )
        session.execute(insert(Transcript), rows)
        data_ids = [row["data_id"] for row in rows]
        found = dict(
            session.execute(
                select(Transcript.data_id, Transcript.id).where(Transcript.data_id.in_(data_ids))
            ).all()
        )
        return [found[data_id] for data_id in data_ids]
