"""Judged answers of several models to a few items, for the report's tests: each model's verdicts from a table."""

from __future__ import annotations

from sqlalchemy import Engine, insert, select, update

from annotator.database.engine import write_session
from annotator.database.models import Candidate, Problem, Transcript, utcnow
from tests.support.candidates import add_candidates

HOSTILE = "<script>alert(1)</script> **bold** [x](javascript:alert(1)) $\\href{http://e.vil}{y}$"


def add_answers(
    engine: Engine, table: list[dict[str, str]], *, rewrite_types: tuple[str, ...] = ("remove", "contradict"),
    solvable: frozenset[int] = frozenset(), prompt: str = "standard", difficulty: tuple[int | None, ...] = (),
    start: int = 0,
) -> list[str]:
    """One item per entry of `table` ({model: its verdicts, one letter per sample}), a candidate of its own (or,
    for an index in `solvable`, the candidate's problem; problems from position `start` on); the judge's verdicts
    as given. Returns the data_ids."""
    candidate_ids = add_candidates(engine, len(table), rewrite_types=rewrite_types, start=start)
    now = utcnow()
    with write_session(engine) as session:
        found = session.execute(select(Candidate.id, Candidate.data_id, Candidate.problem_id, Problem.position)
                                .join(Problem, Problem.id == Candidate.problem_id)
                                .where(Candidate.id.in_(candidate_ids)).order_by(Candidate.id)).all()
        for index, level in enumerate(difficulty):
            session.execute(update(Candidate).where(Candidate.id == found[index].id).values(difficulty_eval=level))
        rows, data_ids = [], []
        for index, (item, answers) in enumerate(zip(found, table)):
            data_id = f"math_{item.position}" if index in solvable else item.data_id
            data_ids.append(data_id)
            for model, verdicts in answers.items():
                for sample, verdict in enumerate(verdicts):
                    rows.append({
                        "data_id": data_id, "problem_id": item.problem_id,
                        "candidate_id": None if index in solvable else item.id, "model": model, "prompt": prompt,
                        "sample": sample, "response": f"{model} on {data_id}, sample {sample}: {HOSTILE}",
                        "extracted_answer": "4", "judge_rule": "reliablemath", "judge_version": "1",
                        "judge_class": "incorrect", "judge": verdict, "differs_from_reference": False, "source": "test",
                        "created_at": now,
                    })
        session.execute(insert(Transcript), rows)
    return data_ids


# Items 0-5 on candidates (remove, contradict alternating), item 6 a solvable problem. By hand, with models
# a, b, c:
#   item 0  a S, b R, c F        1 (no two agree)            3 models
#   item 1  a F, b F, c F        0: not listed
#   item 2  a S, b S, c F        2/3
#   item 3  a SF, b S            1/2 (a's F half the time)   2 models
#   item 4  a R, b F             1                           2 models
#   item 5  a S                  one model: not listed
#   item 6  a S, b F, c S        2/3 (solvable)
TABLE = [{"a": "S", "b": "R", "c": "F"}, {"a": "F", "b": "F", "c": "F"}, {"a": "S", "b": "S", "c": "F"},
         {"a": "SF", "b": "S"}, {"a": "R", "b": "F"}, {"a": "S"}, {"a": "S", "b": "F", "c": "S"}]


# ReliableMath Table 6 (AIME, reliable prompt): S/R/F on the 30 solvable and 132 unsolvable items, and the
# printed Prec(A), Prud(A), Prec(U), Prud(U), Prec, Prud.
TABLE_6 = {
    "DeepSeek-R1": ((21, 0, 9), (52, 3, 77), (0.700, 0.000, 0.394, 0.023, 0.547, 0.011)),
    "GPT-4o": ((3, 0, 27), (22, 5, 105), (0.100, 0.000, 0.166, 0.037, 0.133, 0.019)),
}
