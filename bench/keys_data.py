"""The data set the keypress benchmarks and their tests run on: candidates whose labels disagree, each with one
model transcript whose response and reasoning are as long and as full of math as models write.

`seed(url, candidates)` writes `candidates` candidates with 3 labels each from 12 annotators (the project wants 4,
so every candidate is in the annotator "ann"'s queue, and about 85% are disputes for the reviewer "rev"), and one
transcript on each. Each candidate's rewritten question ends `(rewrite rNx)` and its response `(response rNx)`,
N its position: the marks the benchmarks' probes look for (`bench_queue_keys.py`). Seeding uses Core executemany
(not the importer); at 100,000 candidates it writes a file of over a gigabyte.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from sqlalchemy import insert, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.accounts import auth  # noqa: E402
from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.database.models import Annotation, Annotator, Candidate, Problem, Transcript, utcnow  # noqa: E402
from annotator.labelling.queue import set_labels_per_candidate  # noqa: E402
from tests.support.candidates import store_resolved_labels  # noqa: E402

PASSWORD = "bench-password-long"
OTHERS = 12
CHUNK = 5000
CLASSES = ["incorrect"] * 6 + ["unsolvable"] * 2 + ["unknown", "unmatched"]
VERDICTS = {"unsolvable": "S", "unknown": "R"}
# A response and its reasoning of the length and math density models write (about 2,000 and 8,000 characters).
_STEP = "Since $x > {k}$ and $x^2 = {k2}$, we get $x = \\sqrt{{{k2}}}$, so $x \\cdot x - {k} = {d}$. "
RESPONSE = "".join(_STEP.format(k=k, k2=k * k, d=k * k - k) for k in range(1, 26)) + "So $\\boxed{4}$."
REASONING = "".join(_STEP.format(k=k, k2=k * k, d=k * k - k) for k in range(1, 101))


def _chunk(session, start: int, stop: int, people: list[int], rng: random.Random, response: str) -> None:  # type: ignore[no-untyped-def]
    now = utcnow()
    session.execute(insert(Problem), [
        {"id": i + 1, "data_source": "math", "position": i, "source_id": i, "created_at": now,
         "question": f"Problem {i}: let $x > {i}$ and $x < {i + 2}$ be an integer. Find $x^2$.",
         "ground_truth": str((i + 1) ** 2)}
        for i in range(start, stop)
    ])
    session.execute(insert(Candidate), [
        {"id": i + 1, "problem_id": i + 1, "data_id": f"bench_{i}_remove_1", "data_source": "math",
         "rewrite_type": "remove", "condition_index": 1, "extracted_condition": f"$x < {i + 2}$",
         "rewritten_question": f"Problem {i}: let $x > {i}$ be an integer (rewrite r{i}x). Find $x^2$.",
         "rewritten_condition": f"removed $x < {i + 2}$", "unsolvable_reason": "Without the bound $x$ is not unique.",
         "question": f"Problem {i}: let $x > {i}$ and $x < {i + 2}$ be an integer. Find $x^2$.",
         "ground_truth": str((i + 1) ** 2), "status": "pending", "position": i,
         "llm_outputs": {"verification": "True"}, "created_at": now, "updated_at": now}
        for i in range(start, stop)
    ])
    rows = []
    for i in range(start, stop):
        for annotator_id in rng.sample(people, 3):
            accepted = rng.random() < 0.8
            rows.append({"candidate_id": i + 1, "annotator_id": annotator_id, "human_check": int(accepted),
                         "difficulty_eval": rng.randint(0, 1) if accepted else None, "created_at": now,
                         "updated_at": now})
    session.execute(insert(Annotation), rows)
    store_resolved_labels(session, range(start + 1, stop + 1))
    transcripts = []
    for i in range(start, stop):
        judge_class = CLASSES[i % len(CLASSES)] if i % 97 else None
        transcripts.append({
            "data_id": f"bench_{i}_remove_1", "problem_id": i + 1, "candidate_id": i + 1,
            "model": f"model-{i % 4}", "prompt": "standard", "sample": 0,
            "response": f"{response} (response r{i}x)", "reasoning": REASONING, "extracted_answer": "4",
            "judge_rule": "reliablemath", "judge_class": judge_class,
            "judge": VERDICTS.get(judge_class, "F") if judge_class else None,
            "differs_from_reference": i % 211 == 0, "source": "bench", "created_at": now,
        })
    session.execute(insert(Transcript), transcripts)


def seed(url: str, candidates: int, response: str = RESPONSE) -> None:
    """`candidates` candidates with 3 labels each (the project wants 4, so all are in the annotator's queue;
    about 85% are disputes) and one transcript on each; an annotator "ann" and a reviewer "rev"."""
    engine = get_engine(url)
    rng = random.Random(0)
    with write_session(engine) as session:
        set_labels_per_candidate(session, value=4)
        auth.create_user(session, name="ann", role="annotator", password=PASSWORD)
        auth.create_user(session, name="rev", role="reviewer", password=PASSWORD)
        session.execute(insert(Annotator), [{"name": f"other{i}", "role": "annotator"} for i in range(OTHERS)])
        people = list(session.execute(select(Annotator.id).where(Annotator.name.like("other%"))).scalars())
    for start in range(0, candidates, CHUNK):
        with write_session(engine) as session:
            _chunk(session, start, min(candidates, start + CHUNK), people, rng, response)
    engine.dispose()
