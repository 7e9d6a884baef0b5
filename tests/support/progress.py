"""A project whose candidates are in every state the Overview's chart shows, for stats and page tests."""

from __future__ import annotations

from sqlalchemy import Engine

from annotator import labels
from annotator.db import write_session
from tests.support.candidates import add_candidates, add_user

# (data_source, rewrite_type, state) -> candidates, for the project `add_progress` builds.
EXPECTED_STATES = {
    ("aime", "contradict", "filtered"): 1,
    ("aime", "remove", "filtered"): 1,
    ("math", "contradict", "unlabelled"): 1,
    ("math", "contradict", "complete"): 1,
    ("math", "contradict", "disputed"): 1,
    ("math", "remove", "unlabelled"): 2,
    ("math", "remove", "complete"): 2,
}


def add_progress(engine: Engine) -> int:
    """Seven math candidates (remove, contradict alternating) and two filtered aime ones; two people label
    some. Returns how many labels they gave."""
    ids = add_candidates(engine, 7, data_source="math")
    add_candidates(engine, 2, data_source="aime", status="filtered")
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    given = [
        (ids[0], ann.id, 1, 0),  # remove: complete (kept, simple)
        (ids[1], ann.id, 1, 1),  # contradict: complete (kept, hard)
        (ids[2], ann.id, 0, None),  # remove: complete (rejected)
        (ids[3], ann.id, 1, 0),  # contradict: a tie, disputed
        (ids[3], bea.id, 0, None),
    ]
    with write_session(engine) as session:
        for candidate_id, annotator_id, check, difficulty in given:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=annotator_id, human_check=check,
                                difficulty_eval=difficulty, seconds_spent=10.0)
    return len(given)
