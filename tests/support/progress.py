"""A project whose candidates are in every state the Overview's chart shows, for stats and page tests."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.database.vocabulary import LabelState
from annotator.labelling import adjudication, labels, queue
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


def one_in_each_state(engine: Engine) -> tuple[dict[LabelState, int], Any, Any]:
    """Seven candidates, two labels asked for each: one in each `LabelState`, and an eighth, filtered but
    labelled, that is in its labels' state (complete). Returns ({state: id}, a reviewer, an annotator)."""
    ids = add_candidates(engine, 5, rewrite_types=("remove",))
    filtered = add_candidates(engine, 2, start=5, status="filtered", rewrite_types=("remove",))
    [unverified] = add_candidates(engine, 1, start=7, status="unverified", rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    reviewer = add_user(engine, "rev", role="reviewer")
    given = [
        (ids[1], ann, 1, 0),  # one label of two: in progress
        (ids[2], ann, 1, 1), (ids[2], bea, 1, 1),  # two that agree: complete
        (ids[3], ann, 1, 0), (ids[3], bea, 0, None),  # a tie: disputed
        (ids[4], ann, 1, 0), (ids[4], bea, 0, None),  # a tie a reviewer decided: adjudicated
        (filtered[1], ann, 0, None), (filtered[1], bea, 0, None),  # filtered, but labelled anyway: complete
    ]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for candidate_id, who, check, difficulty in given:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=who.id, human_check=check,
                                difficulty_eval=difficulty)
        adjudication.adjudicate(session, candidate_id=ids[4], reviewer_id=reviewer.id, human_check=0,
                                difficulty_eval=None)
    states = dict(zip(LabelState, [*ids, filtered[0], unverified], strict=True))
    return states, reviewer, ann
