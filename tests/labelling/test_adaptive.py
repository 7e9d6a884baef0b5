"""Adaptive overlap: the policy alone, and the queue, the settled flag, the release and the claims with it on (both
databases)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate, CandidateClaim
from annotator.database.queries import label_state
from annotator.labelling import adaptive, batches, queue, queue_progress
from annotator.labelling.labels import LabelRow, record_labels
from annotator.settings.limits import RangeError
from tests.support.candidates import add_candidates, add_user
from tests.support.simulated_team import simulate, store

EVEN = (0.5, 0.5)
GOOD = adaptive.symmetric_confusion(0.9)


def test_the_posterior_of_the_majority_class() -> None:
    assert adaptive.majority_posterior(EVEN, [GOOD], [1]) == pytest.approx(0.9)
    assert adaptive.majority_posterior(EVEN, [GOOD, GOOD], [1, 1]) == pytest.approx(0.81 / 0.82)
    assert adaptive.majority_posterior(EVEN, [GOOD, GOOD], [1, 0]) == 0.0  # a tie has no majority class
    assert adaptive.majority_posterior(EVEN, [], []) == 0.0
    # Two labels against a strong one: the majority's posterior is low, whatever the count says.
    strong = adaptive.symmetric_confusion(0.99)
    weak = adaptive.symmetric_confusion(0.6)
    assert adaptive.majority_posterior(EVEN, [weak, weak, strong], [0, 0, 1]) < 0.1
    # The prior moves it: with most candidates truly unsolvable, one good "unsolvable" settles more.
    assert adaptive.majority_posterior((0.2, 0.8), [GOOD], [1]) == pytest.approx(0.72 / 0.74)


@given(posterior=st.floats(0, 1), labels=st.integers(0, 25), threshold=st.floats(0.5, 0.9999),
       most=st.integers(1, 20))
def test_another_label_only_below_the_threshold_and_the_most(posterior: float, labels: int, threshold: float,
                                                              most: int) -> None:
    wanted = adaptive.needs_another_label(posterior, labels, threshold=threshold, max_labels=most)
    assert wanted == (labels < most and (labels == 0 or posterior < threshold))


def test_the_setting_is_checked_and_described(engine: Engine) -> None:
    with write_session(engine) as session:
        assert adaptive.overlap(session) == adaptive.Overlap(False, adaptive.DEFAULT_THRESHOLD,
                                                             adaptive.DEFAULT_MAX_LABELS)
        with pytest.raises(RangeError, match="adaptive_threshold must be a number from 0.5 to 0.9999, got 1.5"):
            adaptive.set_overlap(session, adaptive=True, threshold=1.5)
        assert adaptive.overlap(session).adaptive is False  # nothing changed
        setting = adaptive.set_overlap(session, adaptive=True, threshold=0.97, max_labels=4)
        assert setting == adaptive.Overlap(True, 0.97, 4) and queue.label_target(session).labels == 4
        assert "below 0.97, at most 4" in adaptive.describe(setting, 2)
        assert "fixed: 2" in adaptive.describe(adaptive.set_overlap(session, adaptive=False), 2)
        assert queue.label_target(session).labels == queue.labels_per_candidate(session) == 1


def _next(engine: Engine, annotator_id: int) -> int | None:
    with write_session(engine) as session:
        return queue.claim_next(session, annotator_id=annotator_id)


def _decide(engine: Engine, annotator_id: int, candidate_id: int, human_check: int) -> None:
    with write_session(engine) as session:
        queue.decide(session, annotator_id=annotator_id, candidate_id=candidate_id, human_check=human_check,
                     difficulty_eval=0 if human_check else None)


def _states(engine: Engine) -> dict[int, tuple[int, bool, str]]:
    with write_session(engine) as session:
        target = queue.label_target(session)
        rows = session.execute(select(Candidate.id, Candidate.label_count, Candidate.settled, label_state(target)))
        return {row[0]: (row[1], row[2], row[3]) for row in rows}


def test_the_queue_asks_for_another_label_only_while_unsettled(engine: Engine) -> None:
    ids = add_candidates(engine, 3)
    a, b, c = (add_user(engine, name).id for name in "abc")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        adaptive.set_overlap(session, adaptive=True, threshold=0.9, max_labels=3)
    # Nobody's accuracy is known yet (right 0.8 of the time): one label gives 0.8, two that agree 0.94.
    # One label at a time: b does not get the candidate a holds, though it needs more than one label.
    assert (_next(engine, a), _next(engine, b), _next(engine, c)) == (ids[0], ids[1], ids[2])
    _decide(engine, a, ids[0], 1)
    _decide(engine, b, ids[1], 1)
    _decide(engine, c, ids[2], 1)
    assert _next(engine, a) == ids[1] and _next(engine, b) == ids[0] and _next(engine, c) is None
    _decide(engine, a, ids[1], 1)  # agrees: settled with two labels
    _decide(engine, b, ids[0], 0)  # a tie: a third label
    states = _states(engine)
    assert states[ids[1]] == (2, True, "complete") and states[ids[0]] == (2, False, "disputed")
    assert _next(engine, c) == ids[0]
    _decide(engine, c, ids[0], 1)  # two to one, below 0.9 at the most labels: a dispute for a reviewer
    assert _states(engine)[ids[0]] == (3, False, "disputed")
    assert _next(engine, a) == ids[2]  # ids[2] has one label: open still
    assert _released(engine) == {ids[1]}
    with write_session(engine) as session:
        adaptive.set_overlap(session, adaptive=False)
    # Off: back to labels_per_candidate = 2 and nothing settled; ids[1] is complete by its two labels, ids[0]'s
    # majority stands again. ids[2] has one label and a's claim: two, so b gets nothing.
    assert _states(engine)[ids[1]] == (2, False, "complete") and _states(engine)[ids[0]] == (3, False, "complete")
    assert _released(engine) == {ids[0], ids[1]}
    assert _next(engine, b) is None
    with write_session(engine) as session:  # on again: the dispute again, and a reviewer's decision wins over it
        adaptive.set_overlap(session, adaptive=True)
    assert _states(engine)[ids[0]] == (3, False, "disputed")
    reviewer = add_user(engine, "rev", role="reviewer").id
    with write_session(engine) as session:
        record_labels(session, rows=[LabelRow(ids[0], reviewer, 1, 1, decision=True)])
    assert _states(engine)[ids[0]] == (3, False, "adjudicated") and _released(engine) == {ids[0], ids[1]}
    with write_session(engine) as session:
        adaptive.refit(session)
    assert _states(engine)[ids[0]] == (3, False, "adjudicated")


def _released(engine: Engine) -> set[int]:
    with read_session(engine) as session:
        return set(session.execute(select(Candidate.id).where(queue.vetted(queue.label_target(session)))).scalars())


def test_a_stored_strong_annotator_settles_a_candidate_alone(engine: Engine) -> None:
    _, frame = simulate((0.97, 0.6, 0.6, 0.6), 150, seed=12)
    store(engine, frame)
    fresh = add_candidates(engine, 2, start=500)
    with write_session(engine) as session:
        setting = adaptive.set_overlap(session, adaptive=True, threshold=0.85, max_labels=3)
        model = adaptive.stored_model(session)
    assert setting.adaptive and len(model.confusion) == 4
    ids = sorted(model.confusion)
    assert model.confusion[ids[0]][1, 1] > 0.9 and model.confusion[ids[1]][1, 1] < 0.75
    with write_session(engine) as session:
        record_labels(session, rows=[LabelRow(fresh[0], ids[0], 1, 0), LabelRow(fresh[1], ids[1], 1, 0)])
    states = _states(engine)
    assert states[fresh[0]] == (1, True, "complete") and states[fresh[1]] == (1, False, "in progress")


def test_the_model_is_refitted_as_labels_come_not_on_each(engine: Engine) -> None:
    ids = add_candidates(engine, 260)
    people = [add_user(engine, name).id for name in ("p", "q")]
    with write_session(engine) as session:
        adaptive.set_overlap(session, adaptive=True, max_labels=2)
        first = adaptive.stored_model(session)
    assert first.confusion == {}
    rng = np.random.default_rng(1)
    fitted_at = []
    for start, stop in ((0, 50), (50, 110), (110, 260)):
        with write_session(engine) as session:
            record_labels(session, rows=[LabelRow(cid, who, label, 0 if label else None)
                                         for cid in ids[start:stop] for who in people
                                         for label in [int(rng.random() < 0.7)]])
        with read_session(engine) as session:
            model = adaptive.stored_model(session)
        fitted_at.append((model.confusion != {}, model.events))
    # 100 labels: not yet; 220 since the first fit: refitted; 300 more: refitted again.
    assert fitted_at == [(False, 0), (True, 220), (True, 520)]
    assert set(model.confusion) == set(people)


def test_batches_hand_each_candidate_to_one_annotator_at_a_time(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    for name in ("x", "y"):
        add_user(engine, name)
    with write_session(engine) as session:
        adaptive.set_overlap(session, adaptive=True, max_labels=3)
        with pytest.raises(batches.BatchError, match="one label at a time"):
            batches.make_batches(session, annotators=["x", "y"], overlap=2)
        made = batches.make_batches(session, annotators=["x", "y"], per_annotator=4)
        held = session.execute(select(CandidateClaim.candidate_id, func.count()).group_by(CandidateClaim.candidate_id))
        assert dict(held.all()) == dict.fromkeys(ids, 1)
    assert sorted(made.assigned["x"] + made.assigned["y"]) == ids


def test_progress_counts_a_settled_candidate_done(engine: Engine) -> None:
    ids = add_candidates(engine, 2)
    a, b = add_user(engine, "a").id, add_user(engine, "b").id
    with write_session(engine) as session:
        adaptive.set_overlap(session, adaptive=True, threshold=0.9, max_labels=3)
    _decide(engine, a, ids[0], 1)
    with write_session(engine) as session:
        progress = queue_progress.count(session, annotator_id=b)
        assert (progress.done, progress.total, progress.labels_per_candidate) == (0, 2, 3)
        queue.decide(session, annotator_id=b, candidate_id=ids[0], human_check=1, difficulty_eval=0)
        progress.decided(session, candidate_id=ids[0], first_label=True)  # two that agree settle it
        assert progress.done == 1 == queue_progress.count(session, annotator_id=b).done


def test_the_release_manifest_names_adaptive_overlap_when_it_is_on(engine: Engine) -> None:
    from annotator.import_export.exports.reliablemath import manifest

    with write_session(engine) as session:
        assert "adaptive_overlap" not in manifest(session)["vetted"]
        adaptive.set_overlap(session, adaptive=True, threshold=0.97, max_labels=4)
        vetted = manifest(session)["vetted"]
    assert vetted["adaptive_overlap"] == {"threshold": 0.97, "max_labels": 4} and vetted["labels_per_candidate"] == 4
