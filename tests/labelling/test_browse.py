"""Browse's label states say what `stats` says: "vetted" is complete or
adjudicated, "incomplete" resolves to human_check = 1 over fewer than labels_per_candidate labels; the search
matches its text literally (LIKE's wildcards and escape character escaped)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from annotator.database.engine import read_session, write_session
from annotator.database.vocabulary import LabelState, Resolution
from annotator.figures import stats
from annotator.labelling import adjudication, browse, labels, queue
from tests.support.candidates import add_candidates, add_user
from tests.support.progress import one_in_each_state


def test_vetted_means_complete_or_adjudicated_and_incomplete_is_its_own_state(engine: Engine) -> None:
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

    assert found(Resolution.vetted) == [ids[0], ids[2]]
    assert found(Resolution.incomplete) == [ids[1]]
    assert Resolution.incomplete in browse.label_states(reviewer)
    assert Resolution.incomplete not in browse.label_states(ann)


def test_each_label_state_is_one_state_in_browse_and_stats_alike(engine: Engine) -> None:
    states, reviewer, _ann = one_in_each_state(engine)
    with read_session(engine) as session:
        everything = browse.list_candidates(session, viewer=reviewer).rows
        for state, candidate_id in states.items():
            found = browse.list_candidates(session, viewer=reviewer, label_state=state).rows
            assert (candidate_id, state) in [(row["id"], row["state"]) for row in found]
            assert {row["state"] for row in found} == {state} and len(found) == (2 if state == "complete" else 1)
        progress = stats.progress(session)["states"]
        counted = stats.compute(session)["total"]
    shown = {row["id"]: row["state"] for row in everything}
    assert {i: shown[i] for i in states.values()} == {i: state for state, i in states.items()}
    labelled_filtered = (set(shown) - set(states.values())).pop()
    assert shown[labelled_filtered] == LabelState.complete
    assert {row["state"]: row["candidates"] for row in progress} == {**dict.fromkeys(states, 1), "complete": 2}
    # stats' words agree: checked = labelled, disputed = the tie nobody decided; filtered counts by status.
    assert (counted["checked"], counted["disputed"], counted["rejected"], counted["vetted"]) == (5, 1, 2, 1)
    assert (counted["filtered"], counted["unverified"]) == (2, 1)
    assert [row["label_count"] for row in everything] == [0, 1, 2, 2, 2, 0, 2, 0]


def test_the_first_columns_are_data_id_state_my_label_and_labels_status_last(engine: Engine) -> None:
    _states, reviewer, ann = one_in_each_state(engine)
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
    assert [row["comment"] for row in rows] == ["", "the condition is still there", "still there", ""]


def test_describe_change_says_a_removed_comment() -> None:
    old = {"human_check": 0, "difficulty_eval": None, "comment": "x"}
    assert browse.describe_change(old, {**old, "comment": None}) == "comment removed"
    assert browse.describe_change(old, old) == "nothing"


@pytest.mark.parametrize(
    ("search", "matches", "near_misses"),
    [
        ("50%", "costs 50% more", "costs 500 more"),  # % is not "anything"
        ("a_b", "set a_b here", "set axb here"),  # _ is not "any one character"
        ("a\\b", "path a\\b here", "path ab here"),  # \ is itself, not an escape
        ("\\%", "odd \\% sign", "odd % sign"),
    ],
)
def test_the_search_matches_percent_underscore_and_backslash_literally(
    engine: Engine, search: str, matches: str, near_misses: str
) -> None:
    [hit] = add_candidates(engine, 1, rewritten_question=f"Find x: {matches}.")
    add_candidates(engine, 1, start=1, rewritten_question=f"Find x: {near_misses}.")
    reviewer = add_user(engine, "rev", role="reviewer")
    with read_session(engine) as session:
        found = browse.list_candidates(session, viewer=reviewer, search=search)
    assert [row["id"] for row in found.rows] == [hit] and found.total == 1
