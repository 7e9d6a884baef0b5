"""Browse's label states say what `stats` says (issue 17, item 1): "kept" is vetted (complete or adjudicated),
"incomplete" resolves to human_check = 1 over fewer than labels_per_candidate labels."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from annotator import adjudication, browse, labels, queue, stats
from annotator.db import read_session, write_session
from annotator.vocabulary import LabelState
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


def _one_in_each_state(engine: Engine) -> tuple[dict[str, int], Any, Any]:
    """Five candidates, two labels asked for each: one in each `LabelState`. Returns {state: id}, a reviewer and
    an annotator."""
    ids = add_candidates(engine, 5, rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    reviewer = add_user(engine, "rev", role="reviewer")
    given = [
        (ids[1], ann, 1, 0),  # one label of two: in progress
        (ids[2], ann, 1, 1), (ids[2], bea, 1, 1),  # two that agree: complete
        (ids[3], ann, 1, 0), (ids[3], bea, 0, None),  # a tie: disputed
        (ids[4], ann, 1, 0), (ids[4], bea, 0, None),  # a tie a reviewer decided: adjudicated
    ]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for candidate_id, who, check, difficulty in given:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=who.id, human_check=check,
                                difficulty_eval=difficulty)
        adjudication.adjudicate(session, candidate_id=ids[4], reviewer_id=reviewer.id, human_check=0,
                                difficulty_eval=None)
    states = dict(zip([state.value for state in LabelState], ids, strict=True))
    return states, reviewer, ann


def test_each_label_state_is_one_state_in_browse_and_stats_alike(engine: Engine) -> None:
    states, reviewer, _ann = _one_in_each_state(engine)
    with read_session(engine) as session:
        everything = browse.list_candidates(session, viewer=reviewer).rows
        for state, candidate_id in states.items():
            found = browse.list_candidates(session, viewer=reviewer, label_state=state).rows
            assert [(row["id"], row["state"]) for row in found] == [(candidate_id, state)]
        progress = stats.progress(session)["states"]
        counted = stats.compute(session)["total"]
    assert {row["id"]: row["state"] for row in everything} == {i: state for state, i in states.items()}
    assert {row["state"]: row["candidates"] for row in progress} == dict.fromkeys(states, 1)
    # stats' words agree: checked = not unlabelled, disputed = the tie nobody decided.
    assert (counted["checked"], counted["disputed"], counted["rejected"], counted["kept"]) == (4, 1, 1, 1)
    assert {row["id"]: row["label_count"] for row in everything} == dict(zip(states.values(), (0, 1, 2, 2, 2)))


def test_the_first_columns_are_data_id_state_my_label_and_labels_status_last(engine: Engine) -> None:
    _states, reviewer, ann = _one_in_each_state(engine)
    with read_session(engine) as session:
        seen_by_reviewer = browse.list_candidates(session, viewer=reviewer).rows[0]
        seen_by_ann = browse.list_candidates(session, viewer=ann).rows[0]
    assert list(seen_by_reviewer)[:6] == ["id", "data_id", "state", "my_human_check", "my_difficulty_eval",
                                          "label_count"]
    assert list(seen_by_reviewer)[-1] == "status"
    # An annotator sees neither the state nor the count: both would tell her what others decided.
    assert list(seen_by_ann)[:4] == ["id", "data_id", "my_human_check", "my_difficulty_eval"]
    assert "state" not in seen_by_ann and "label_count" not in seen_by_ann and list(seen_by_ann)[-1] == "status"


def test_history_reads_who_when_and_what_changed(engine: Engine) -> None:
    [candidate_id] = add_candidates(engine, 1)
    ann, reviewer = add_user(engine, "ann"), add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=candidate_id, annotator_id=ann.id, human_check=1, difficulty_eval=0)
        labels.record_label(session, candidate_id=candidate_id, annotator_id=ann.id, human_check=0,
                            difficulty_eval=None, comment="the condition is still there")
        labels.record_label(session, candidate_id=candidate_id, annotator_id=ann.id, human_check=0,
                            difficulty_eval=None, comment="still there")
        adjudication.adjudicate(session, candidate_id=candidate_id, reviewer_id=reviewer.id, human_check=1,
                                difficulty_eval=1)
    with read_session(engine) as session:
        rows = browse.history_rows(browse.label_history(session, candidate_id=candidate_id, viewer=reviewer)["events"])
    assert [(row["who"], row["what"], row["changed"]) for row in rows] == [
        ("ann", "labelled", "human_check 1, difficulty_eval 0"),
        ("ann", "changed", "human_check 1 → 0, difficulty_eval 0 → —, comment added"),
        ("ann", "changed", "comment changed"),
        ("rev", "adjudicated", "human_check 1, difficulty_eval 1"),
    ]
    assert all(len(row["when"]) == 19 and row["when"][4] == "-" for row in rows)


def test_describe_change_says_a_removed_comment() -> None:
    old = {"human_check": 0, "difficulty_eval": None, "comment": "x"}
    assert browse.describe_change(old, {**old, "comment": None}) == "comment removed"
    assert browse.describe_change(old, old) == "nothing"
