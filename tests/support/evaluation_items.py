"""A small evaluation set in a real database, and a scripted model that answers the evaluation prompts."""

from __future__ import annotations

from sqlalchemy import Engine, update

from annotator.database.engine import write_session
from annotator.database.models import Candidate, Problem
from tests.construction.pipeline.conftest import add_problems
from tests.support.candidates import add_candidates

# The A set, then the U set, in the order `evaluation_items` gives them.
VETTED = [
    "aime_0", "aime_1", "aime_2", "math_0", "math_1", "math_2", "treecut_0", "math_0_remove_1", "math_1_contradict_1",
]
UNVETTED = ["math_2_remove_1"]
TREECUT_QUESTION = (
    "A burger costs 3 dollars more than a salad. A salad costs 4 dollars. Question: how much does a burger cost?"
)


def add_evaluation_items(engine: Engine) -> None:
    """3 AIME-style problems, 3 MATH-style problems with a candidate each (two of them vetted), and a TreeCut
    problem: `VETTED` are the items of the vetted set, `UNVETTED` the one more that `all` takes."""
    add_problems(engine, 3)
    ids = add_candidates(engine, 3, data_source="math")
    with write_session(engine) as session:
        # Resolved as one label of human_check = 1 resolves (labels_per_candidate is 1): vetted.
        session.execute(update(Candidate).where(Candidate.id.in_(ids[:2])).values(
            human_check=1, difficulty_eval=0, label_count=1, label_source="single"))
        session.add(Problem(data_source="treecut", position=0, source_id=0, question=TREECUT_QUESTION,
                            ground_truth="7", extra={"treecut": {"answerable": True}}))


def scripted_solver(prompt: str, model: str = "") -> str:
    """A model that boxes an answer to ReliableMath prompts and says "Answer: 7" to TreeCut's."""
    if "Answer: unknown" in prompt:
        return "The burger costs 4 + 3 = 7 dollars.\nAnswer: 7"
    return f"Step by step ({model}): the answer is \\boxed{{{len(prompt) % 97}}}."
