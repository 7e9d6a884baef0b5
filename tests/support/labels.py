"""Candidates and annotators to label, and the agreement a candidate's labels give."""

from __future__ import annotations

from collections import Counter, defaultdict

from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Annotation, Annotator, Candidate, Problem


def seed(engine: Engine, candidates: int = 3, annotators: int = 3) -> tuple[list[int], list[int]]:
    with write_session(engine) as session:
        problem = Problem(data_source="t", position=0, question="What is $1+1$?", ground_truth="2")
        session.add(problem)
        session.flush()
        cids = []
        for k in range(candidates):
            candidate = Candidate(
                problem_id=problem.id,
                data_id=f"t_0_remove_{k + 1}",
                data_source="t",
                rewrite_type="remove",
                condition_index=k + 1,
                rewritten_question="What is $1+x$?",
                question=problem.question,
                ground_truth="2",
            )
            session.add(candidate)
            session.flush()
            cids.append(candidate.id)
        aids = []
        for i in range(annotators):
            annotator = Annotator(name=f"a{i}")
            session.add(annotator)
            session.flush()
            aids.append(annotator.id)
    return cids, aids


def assert_agreement_recomputed(engine: Engine) -> dict[int, float | None]:
    """Every candidate's stored agreement is the share of its labels equal to the most common one, counted again
    from the labels here (None without labels)."""
    with read_session(engine) as session:
        stored = dict(session.execute(select(Candidate.id, Candidate.agreement)).all())
        given = session.execute(select(Annotation.candidate_id, Annotation.human_check, Annotation.difficulty_eval))
        per_candidate: dict[int, Counter[tuple[int, int | None]]] = defaultdict(Counter)
        for candidate_id, check, difficulty in given:
            per_candidate[candidate_id][(check, difficulty)] += 1
    expected = {candidate_id: max(counts.values()) / sum(counts.values()) if (counts := per_candidate.get(candidate_id))
                else None for candidate_id in stored}
    assert stored == expected
    return stored
