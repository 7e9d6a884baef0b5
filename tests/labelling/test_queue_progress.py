"""The queue's progress figures: counted afresh, and kept up to date after each decision
without counting, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import Engine, update

from annotator.accounts import auth
from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate
from annotator.labelling import queue, queue_progress
from tests.support.candidates import add_candidates, add_user


def _count(engine: Engine, annotator_id: int, **filters: str | None) -> queue_progress.QueueProgress:
    with read_session(engine) as session:
        return queue_progress.count(session, annotator_id=annotator_id, **filters)


def _figures(progress: queue_progress.QueueProgress) -> tuple[int, int, int, int]:
    return progress.mine_done, progress.mine_left, progress.done, progress.total


def _decide(engine: Engine, annotator_id: int, candidate_id: int, progress: queue_progress.QueueProgress | None = None,
            human_check: int = 0) -> None:
    with write_session(engine) as session:
        first = queue.load(session, candidate_id=candidate_id, annotator_id=annotator_id)["my_label"] is None
        queue.decide(session, annotator_id=annotator_id, candidate_id=candidate_id, human_check=human_check,
                     difficulty_eval=0 if human_check else None)
        if progress is not None:
            progress.decided(session, candidate_id=candidate_id, first_label=first)


def test_counts_follow_the_queue_with_two_labels_per_candidate(engine: Engine) -> None:
    ids = add_candidates(engine, 5)
    add_candidates(engine, 2, data_source="other", start=100)
    add_candidates(engine, 3, status="filtered", start=200)  # not in the queue: counted nowhere
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
    assert _figures(_count(engine, ann.id)) == (0, 7, 0, 7)

    _decide(engine, ann.id, ids[0])
    _decide(engine, bob.id, ids[0])  # complete
    _decide(engine, bob.id, ids[1])  # one of two labels: still open for ann
    _decide(engine, ann.id, ids[2])  # ann's, still open for others but not for ann
    assert _figures(_count(engine, ann.id)) == (2, 5, 1, 7)  # left: ids[1], ids[3], ids[4] and the other two
    assert _figures(_count(engine, bob.id)) == (2, 5, 1, 7)
    assert _figures(_count(engine, ann.id, data_source="math")) == (2, 3, 1, 5)
    assert _figures(_count(engine, ann.id, data_source="other")) == (0, 2, 0, 2)
    # rewrite types alternate remove, contradict: ids[0], ids[2], ids[4] are "remove"
    assert _figures(_count(engine, ann.id, data_source="math", rewrite_type="remove")) == (2, 1, 1, 3)


def _two_labels_each(engine: Engine) -> tuple[list[int], auth.User, auth.User]:
    """Four candidates, two labels asked of each, and two annotators: ann and bob."""
    ids = add_candidates(engine, 4)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
    return ids, ann, bob


def test_decisions_keep_the_figures_equal_to_a_fresh_count(engine: Engine) -> None:
    ids, ann, bob = _two_labels_each(engine)
    _decide(engine, bob.id, ids[0])
    kept = _count(engine, ann.id)
    assert _figures(kept) == (0, 4, 0, 4)

    _decide(engine, ann.id, ids[0], kept)  # completes ids[0]
    assert _figures(kept) == _figures(_count(engine, ann.id)) == (1, 3, 1, 4)
    _decide(engine, ann.id, ids[1], kept)  # first of two labels
    assert _figures(kept) == _figures(_count(engine, ann.id)) == (2, 2, 1, 4)
    _decide(engine, ann.id, ids[1], kept, human_check=1)  # a changed label moves nothing
    assert _figures(kept) == _figures(_count(engine, ann.id)) == (2, 2, 1, 4)
    assert kept.decisions_since == 3 and kept.mine_share == 0.5 and kept.share == 0.25


def test_a_recount_is_due_after_other_filters_many_decisions_or_some_time(engine: Engine) -> None:
    add_candidates(engine, 1)
    ann = add_user(engine, "ann")
    progress = _count(engine, ann.id, data_source="math")
    now = progress.counted_at
    assert not progress.due(filters=("math", None), now=now)
    assert progress.due(filters=(None, None), now=now)
    assert progress.due(filters=("math", None), now=now + queue_progress.RECOUNT_SECONDS)
    progress.decisions_since = queue_progress.RECOUNT_DECISIONS
    assert progress.due(filters=("math", None), now=now)


def test_an_empty_queue_is_all_done(engine: Engine) -> None:
    ann = add_user(engine, "ann")
    progress = _count(engine, ann.id)
    assert _figures(progress) == (0, 0, 0, 0) and progress.mine_share == progress.share == 1.0


def test_a_settled_candidate_short_of_its_labels_is_done_once_and_one_with_all_its_labels_once(engine: Engine) -> None:
    """Done = enough labels or settled by adaptive overlap (`Candidate.settled`), counted apart but never twice."""
    ids, ann, bob = _two_labels_each(engine)
    _decide(engine, ann.id, ids[0])
    _decide(engine, bob.id, ids[0])  # all its labels, and settled too below
    _decide(engine, bob.id, ids[1])  # one label of two, settled below
    with write_session(engine) as session:
        session.execute(update(Candidate).where(Candidate.id.in_(ids[:2])).values(settled=True))
    assert _figures(_count(engine, ann.id)) == (1, 2, 2, 4)  # ann's label on ids[0]; left: ids[2], ids[3]
