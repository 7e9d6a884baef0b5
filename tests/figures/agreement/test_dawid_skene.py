"""The Dawid-Skene model: it recovers simulated annotators' accuracies, and agrees with crowd-kit's `DawidSkene` (the
reference implementation) on the same labels, gold items included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.figures.agreement import dawid_skene
from tests.support.simulated_team import ACCURACIES, simulate

# crowd-kit's pandas calls warn of pandas' coming changes: not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::Warning:crowdkit.*")


def _ours(frame: pd.DataFrame, gold: dict[int, int] | None = None) -> dawid_skene.Fit:
    labels = dawid_skene.Labels.of(frame["task"].tolist(), frame["worker"].tolist(), frame["label"].tolist())
    return dawid_skene.fit(labels, gold=gold)


def _crowdkit(frame: pd.DataFrame, fitted: dawid_skene.Fit, gold: dict[int, int] | None = None) -> tuple:
    """crowd-kit's posteriors (items x classes), confusion matrices (raters x said x true) and accuracies, in our
    order."""
    model = DawidSkene(n_iter=100).fit(frame, pd.Series(gold) if gold else None)
    posterior = model.probas_.reindex(index=list(fitted.labels.items), columns=[0, 1]).fillna(0).to_numpy()
    confusion = np.stack([model.errors_.loc[rater].reindex(index=[0, 1], columns=[0, 1]).fillna(0).to_numpy()
                          for rater in fitted.labels.raters])
    right = model.probas_.reindex(columns=[0, 1]).fillna(0).to_numpy()[
        model.probas_.index.get_indexer(frame["task"]), frame["label"].to_numpy()]
    accuracy = pd.Series(right).groupby(frame["worker"].to_numpy()).mean().reindex(list(fitted.labels.raters))
    return posterior, confusion, accuracy.to_numpy()


def test_recovers_five_simulated_annotators_accuracies_within_005() -> None:
    _, frame = simulate(ACCURACIES, 600, seed=20260131)
    fitted = _ours(frame)
    assert fitted.labels.raters == tuple(f"a{i}" for i in range(5))
    assert np.abs(fitted.accuracy - np.array(ACCURACIES)).max() < 0.05, fitted.accuracy
    assert list(fitted.items_labelled) == [600] * 5
    # Confusion columns are probabilities; the diagonal is the accuracy under each true class.
    assert np.allclose(fitted.confusion.sum(axis=1), 1)
    assert np.abs(fitted.confusion[:, 1, 1] - np.array(ACCURACIES)).max() < 0.06


def test_the_posteriors_pick_out_the_truth_better_than_the_majority() -> None:
    truth, frame = simulate(ACCURACIES, 600, seed=7)
    fitted = _ours(frame)
    model_right = (fitted.posterior.argmax(axis=1) == truth).mean()
    votes = fitted.labels.vote_counts()
    majority_right = (votes.argmax(axis=1) == truth).mean()
    assert model_right > majority_right and model_right >= 0.96


def test_the_same_estimates_as_crowdkit_within_001() -> None:
    _, frame = simulate(ACCURACIES, 600, seed=20260131)
    fitted = _ours(frame)
    posterior, confusion, accuracy = _crowdkit(frame, fitted)
    assert np.abs(fitted.posterior - posterior).max() < 0.01
    assert np.abs(fitted.confusion - confusion).max() < 0.01
    assert np.abs(fitted.accuracy - accuracy).max() < 0.01


def test_gold_items_anchor_the_model_as_crowdkit_clamps_them() -> None:
    truth, frame = simulate((0.9, 0.6, 0.55), 200, seed=3)
    gold = {item: int(truth[item]) for item in range(0, 200, 10)}
    fitted = _ours(frame, gold)
    assert all(fitted.posterior[item, gold[item]] == 1.0 for item in gold)
    posterior, confusion, accuracy = _crowdkit(frame, fitted, gold)
    assert np.abs(fitted.posterior - posterior).max() < 0.01
    assert np.abs(fitted.accuracy - accuracy).max() < 0.01
    # Without the gold items the fit differs: they are not ignored.
    assert np.abs(_ours(frame).posterior - fitted.posterior).max() > 0.01


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), raters=st.integers(2, 6), overlap=st.floats(0.4, 1.0))
def test_agrees_with_crowdkit_on_any_sparse_team(seed: int, raters: int, overlap: float) -> None:
    rng = np.random.default_rng(seed)
    accuracies = tuple(float(a) for a in rng.uniform(0.55, 0.98, raters))
    _, frame = simulate(accuracies, 80, seed=seed, overlap=overlap)
    if frame.empty:
        return
    fitted = _ours(frame)
    posterior, confusion, accuracy = _crowdkit(frame, fitted)
    assert np.abs(fitted.posterior - posterior).max() < 0.01
    assert np.abs(fitted.accuracy - accuracy).max() < 0.01


def test_bootstrap_intervals_hold_the_truth_and_are_seeded() -> None:
    _, frame = simulate(ACCURACIES, 600, seed=11)
    fitted = _ours(frame)
    low, high = dawid_skene.bootstrap_accuracy(fitted.labels, resamples=100, seed=5)
    assert np.all(low <= fitted.accuracy) and np.all(fitted.accuracy <= high)
    assert np.all(high - low < 0.1) and np.all(high - low > 0)
    again = dawid_skene.bootstrap_accuracy(fitted.labels, resamples=100, seed=5)
    assert np.array_equal(low, again[0]) and np.array_equal(high, again[1])
    assert not np.array_equal(low, dawid_skene.bootstrap_accuracy(fitted.labels, resamples=100, seed=6)[0])


def test_one_items_posterior_is_the_fits_e_step() -> None:
    _, frame = simulate(ACCURACIES, 300, seed=2)
    fitted = _ours(frame)
    labels = fitted.labels
    for item in (0, 17, 123):
        mine = labels.item == item
        alone = dawid_skene.posterior_of(fitted.prior, [fitted.confusion[r] for r in labels.rater[mine]],
                                         labels.label[mine].tolist())
        # The fit's posterior is one E-step behind its last M-step: recomputed, it moves by less than the tolerance.
        assert alone == pytest.approx(fitted.posterior[item], abs=1e-3)


def test_no_labels_and_bad_classes_say_so() -> None:
    with pytest.raises(ValueError, match="no labels"):
        dawid_skene.fit(dawid_skene.Labels.of([], [], []))
    with pytest.raises(ValueError, match="classes 0..1"):
        dawid_skene.Labels.of([1], ["a"], [2])
