"""Adjudication: the dispute queue (lowest agreement first), a reviewer's decision, its provenance and event."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from annotator.accounts.auth import User
from annotator.database.engine import read_session, write_session
from annotator.database.models import Adjudication, AnnotationEvent, Annotator, Candidate
from annotator.labelling import adjudication, browse, labels
from tests.support.labels import assert_agreement_recomputed, seed

# candidate index -> labels of annotators 0, 1, 2
LABELS = {
    0: [(1, 0), (1, 0), (1, 0)],  # unanimous: no dispute
    1: [(1, 0), (0, None)],  # tie on human_check: agreement 1/2, unresolved
    2: [(1, 0), (1, 1), (1, 0)],  # difficulty 2-1: agreement 2/3
    3: [(1, 1), (0, None), (1, 0)],  # three different labels: agreement 1/3
    4: [(1, 1), (1, 0)],  # difficulty tie: agreement 1/2, resolved (hard) by the tie rule
    5: [(0, None)],  # single
}


def _seed(engine: Engine) -> tuple[list[int], list[int]]:
    cids, aids = seed(engine, candidates=len(LABELS), annotators=4)
    with write_session(engine) as session:
        for index, values in LABELS.items():
            for annotator_id, (check, difficulty) in zip(aids, values, strict=False):
                labels.record_label(session, candidate_id=cids[index], annotator_id=annotator_id,
                                    human_check=check, difficulty_eval=difficulty, comment=f"c{index}")
    return cids, aids


def test_disputes_come_lowest_agreement_first_ties_before_resolved(engine: Engine) -> None:
    cids, _ = _seed(engine)
    with read_session(engine) as session:
        found = adjudication.disputes(session)
        sources = {c.id: c.label_source for c in session.execute(select(Candidate)).scalars()}
    assert [row["id"] for row in found] == [cids[3], cids[1], cids[4], cids[2]]
    assert [round(row["agreement"], 3) for row in found] == [0.333, 0.5, 0.5, 0.667]
    assert [row["human_check"] for row in found] == [1, None, 1, 1]
    assert sources == {cids[0]: "unanimous", cids[1]: None, cids[2]: "majority", cids[3]: "majority",
                       cids[4]: "majority", cids[5]: "single"}


def test_adjudication_wins_is_an_event_and_leaves_the_queue(engine: Engine) -> None:
    cids, aids = _seed(engine)
    reviewer = aids[3]
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=reviewer, human_check=0,
                                difficulty_eval=None, comment="condition 2 is still implied")
        disputes = adjudication.DisputeQueue()
        assert disputes.next(session) == cids[3]
        assert len(disputes) == 2  # cids[4] and cids[2] ahead
        assert adjudication.DisputeQueue().next(session, exclude=[cids[3]]) == cids[4]
    with read_session(engine) as session:
        candidate = session.get(Candidate, cids[1])
        assert (candidate.human_check, candidate.difficulty_eval, candidate.label_source) == (0, None, "adjudicated")
        assert candidate.label_count == 2  # the annotators' labels still count as labels
        assert cids[1] not in [row["id"] for row in adjudication.disputes(session)]
        assert cids[1] in [row["id"] for row in adjudication.disputes(session, include_adjudicated=True)]
        who = adjudication.adjudications(session)
        assert set(who) == {cids[1]} and who[cids[1]]["adjudicated_by"] == "a3"
        events = session.execute(
            select(AnnotationEvent).where(AnnotationEvent.candidate_id == cids[1],
                                          AnnotationEvent.action == "adjudicate")
        ).scalars().all()
        assert [(e.annotator_id, e.old, e.new["human_check"]) for e in events] == [(reviewer, None, 0)]
        assert [row["comment"] for row in adjudication.dispute_labels(session, candidate_id=cids[1])] == ["c1", "c1"]

    # Changing the decision is a second event; the same decision again is none. A later label does not
    # undo the adjudication.
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=reviewer, human_check=1, difficulty_eval=1)
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=reviewer, human_check=1, difficulty_eval=1)
        labels.record_label(session, candidate_id=cids[1], annotator_id=aids[2], human_check=0, difficulty_eval=None)
    with read_session(engine) as session:
        candidate = session.get(Candidate, cids[1])
        assert (candidate.human_check, candidate.difficulty_eval, candidate.label_source) == (1, 1, "adjudicated")
        assert candidate.label_count == 3
        actions = session.execute(
            select(AnnotationEvent.old, AnnotationEvent.new).where(
                AnnotationEvent.candidate_id == cids[1], AnnotationEvent.action == "adjudicate"
            ).order_by(AnnotationEvent.id)
        ).all()
        assert [(old and old["human_check"], new["human_check"]) for old, new in actions] == [(None, 0), (0, 1)]
    assert_agreement_recomputed(engine)  # a decision and a later label leave the stored agreement right


def test_the_dispute_queue_passes_over_what_was_settled_since_it_was_read(engine: Engine) -> None:
    cids, aids = _seed(engine)
    disputes = adjudication.DisputeQueue()
    with write_session(engine) as session:
        assert disputes.next(session) == cids[3]
        # Since the read: another reviewer settles cids[1], and an annotator's change makes cids[4] unanimous.
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=aids[3], human_check=0,
                                difficulty_eval=None)
        labels.record_label(session, candidate_id=cids[4], annotator_id=aids[1], human_check=1, difficulty_eval=1)
        assert not adjudication.is_open_dispute(session, candidate_id=cids[4])
        assert adjudication.is_open_dispute(session, candidate_id=cids[2])
        assert disputes.next(session) == cids[2]
        assert len(disputes) == 0
        for candidate_id in (cids[3], cids[2]):
            adjudication.adjudicate(session, candidate_id=candidate_id, reviewer_id=aids[3], human_check=1,
                                    difficulty_eval=0)
        assert disputes.next(session) is None
        # A dispute that came after the list ran out is found: the list is read again.
        labels.record_label(session, candidate_id=cids[0], annotator_id=aids[3], human_check=0, difficulty_eval=None)
        assert disputes.next(session) == cids[0]


def test_the_dispute_queue_reads_a_page_at_a_time_in_order_and_starts_again_from_the_lowest(engine: Engine) -> None:
    """Read two at a time, the walk is the whole order (`disputes`), counting what is ahead; past the last
    page it starts again from the lowest dispute, for those that came or were skipped since."""
    cids, aids = _seed(engine)
    with write_session(engine) as session:  # two more disputes: agreement 3/4, and a tie (1/2)
        labels.record_label(session, candidate_id=cids[0], annotator_id=aids[3], human_check=0, difficulty_eval=None)
        labels.record_label(session, candidate_id=cids[5], annotator_id=aids[3], human_check=1, difficulty_eval=1)
    order = [cids[3], cids[1], cids[5], cids[4], cids[2], cids[0]]
    disputes = adjudication.DisputeQueue(page=2)
    walked, ahead = [], []
    with read_session(engine) as session:
        assert [row["id"] for row in adjudication.disputes(session)] == order
        while (candidate_id := disputes.next(session, exclude=walked)) is not None:
            walked.append(candidate_id)
            ahead.append(len(disputes))
        assert walked == order
        assert ahead == [5, 4, 3, 2, 1, 0]
        assert disputes.next(session) == cids[3]  # every one skipped: from the lowest again
        assert adjudication.DisputeQueue(page=2).next(session, exclude=order[:5]) == cids[0]
    with write_session(engine) as session:
        for candidate_id in order:
            adjudication.adjudicate(session, candidate_id=candidate_id, reviewer_id=aids[3], human_check=1,
                                    difficulty_eval=0)
        assert disputes.next(session) is None
        assert adjudication.disputes(session) == []
        # Decided, none is a tie any more: the three at 1/2 by id.
        decided = [row["id"] for row in adjudication.disputes(session, include_adjudicated=True)]
        assert decided == [cids[3], cids[1], cids[4], cids[5], cids[2], cids[0]]


def test_an_adjudication_must_be_a_label(engine: Engine) -> None:
    cids, aids = _seed(engine)
    with pytest.raises(labels.LabelError), write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=aids[3], human_check=1, difficulty_eval=None)
    with read_session(engine) as session:
        assert session.get(Candidate, cids[1]).label_source is None


def test_a_second_reviewer_is_told_who_decided_meanwhile_and_may_override(engine: Engine) -> None:
    cids, aids = _seed(engine)
    first, second = aids[2], aids[3]
    with read_session(engine) as session:  # both reviewers have the dispute on screen
        assert adjudication.is_open_dispute(session, candidate_id=cids[1])
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=first, human_check=0, difficulty_eval=None)
    with pytest.raises(adjudication.DecidedMeanwhile) as caught, write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=second, human_check=1, difficulty_eval=1)
    with read_session(engine) as session:
        first_name = session.execute(select(Annotator.name).where(Annotator.id == first)).scalar_one()
        assert session.get(Adjudication, cids[1]).annotator_id == first  # the first decision stands
        assert session.get(Candidate, cids[1]).human_check == 0
    assert (caught.value.by, caught.value.human_check, caught.value.difficulty_eval) == (first_name, 0, None)
    assert str(caught.value).startswith(f"{first_name} decided this dispute meanwhile")
    # The first reviewer may change their own decision without ceremony; the second overrides explicitly.
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=first, human_check=1, difficulty_eval=0)
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=second, human_check=1, difficulty_eval=1,
                                override=True)
    with read_session(engine) as session:
        decided = session.get(Adjudication, cids[1])
        assert (decided.annotator_id, decided.human_check, decided.difficulty_eval) == (second, 1, 1)
        events = session.execute(
            select(AnnotationEvent.annotator_id)
            .where(AnnotationEvent.action == "adjudicate", AnnotationEvent.candidate_id == cids[1])
            .order_by(AnnotationEvent.id)
        )
        assert list(events.scalars()) == [first, first, second]


def test_an_override_keeps_the_earlier_decision_and_its_comment_in_the_history(engine: Engine) -> None:
    """The second reviewer learns the first one's comment, and after the override the history (Adjudicate's
    decisions, Browse's rows) still holds the first decision and its comment beside the second."""
    cids, aids = _seed(engine)
    first, second = aids[2], aids[3]
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=first, human_check=0, difficulty_eval=None,
                                comment="x is fixed by the *second* sentence")
    with pytest.raises(adjudication.DecidedMeanwhile) as caught, write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=second, human_check=1, difficulty_eval=0)
    assert caught.value.comment == "x is fixed by the *second* sentence"
    with write_session(engine) as session:  # overriding without a comment of their own
        adjudication.adjudicate(session, candidate_id=cids[1], reviewer_id=second, human_check=1, difficulty_eval=0,
                                override=True)
    with read_session(engine) as session:
        names = dict(session.execute(select(Annotator.id, Annotator.name)).all())
        history = adjudication.decision_history(session, candidate_id=cids[1])
        viewer = User(id=second, name=names[second], role="reviewer")
        rows = browse.history_rows(browse.label_history(session, candidate_id=cids[1], viewer=viewer)["events"])
        assert session.get(Adjudication, cids[1]).comment is None  # the decision that stands has none
    assert [(h["reviewer"], h["human_check"], h["comment"], h["overrode"], h["current"]) for h in history] == [
        (names[first], 0, "x is fixed by the *second* sentence", None, False),
        (names[second], 1, None, names[first], True)]
    assert [(row["who"], row["what"], row["comment"]) for row in rows[-2:]] == [
        (names[first], "adjudicated", "x is fixed by the *second* sentence"),
        (names[second], f"overrode {names[first]}'s decision", "")]
    assert rows[0]["comment"] == "c1"  # the labels' comments too


def test_a_decision_on_a_candidate_without_labels_resolves_it(engine: Engine) -> None:
    """The resolved label is counted from the candidates when a decision is among the rows, so one with no label
    (none to count from) still takes the reviewer's decision."""
    cids, aids = _seed(engine)
    with write_session(engine) as session:
        problem_id = session.get(Candidate, cids[0]).problem_id
        candidate = Candidate(problem_id=problem_id, data_id="t_0_remove_9", data_source="t", rewrite_type="remove",
                              condition_index=9, rewritten_question="What is $x$?")
        session.add(candidate)
        session.flush()
        unlabelled = candidate.id
        adjudication.adjudicate(session, candidate_id=unlabelled, reviewer_id=aids[3], human_check=1, difficulty_eval=0)
    with read_session(engine) as session:
        candidate = session.get(Candidate, unlabelled)
        assert (candidate.label_count, candidate.human_check, candidate.difficulty_eval, candidate.label_source) == (
            0, 1, 0, "adjudicated")
        assert session.get(Candidate, cids[5]).label_source == "single"  # others untouched
