"""Browse's label states say what `stats` says (issue 17, item 1): "kept" is vetted (complete or adjudicated),
"incomplete" resolves to human_check = 1 over fewer than labels_per_candidate labels."""

from __future__ import annotations

from sqlalchemy import Engine

from annotator import adjudication, browse, labels, queue
from annotator.db import read_session, write_session
from tests.support.candidates import add_candidates, add_user


def test_kept_means_vetted_and_incomplete_is_its_own_state(engine: Engine) -> None:
    ids = add_candidates(engine, 3, rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    reviewer = add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for candidate_id, who in ((ids[0], ann), (ids[0], bea), (ids[1], ann), (ids[2], ann)):
            labels.record_label(session, candidate_id=candidate_id, annotator_id=who.id, human_check=1,
                                difficulty_eval=0)
        adjudication.adjudicate(session, candidate_id=ids[2], reviewer_id=reviewer.id, human_check=1,
                                difficulty_eval=1)

    def found(state: str) -> list[int]:
        with read_session(engine) as session:
            return sorted(row["id"] for row in browse.list_candidates(session, viewer=reviewer, label_state=state).rows)

    assert found("kept") == [ids[0], ids[2]]
    assert found("incomplete") == [ids[1]]
    assert "incomplete" in browse.label_states(reviewer) and "incomplete" not in browse.label_states(ann)
