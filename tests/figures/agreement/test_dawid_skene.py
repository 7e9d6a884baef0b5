"""The Dawid-Skene model: it recovers simulated annotators' accuracies, and agrees with crowd-kit's `DawidSkene` (the
reference implementation) on the same labels, gold items included."""

from __future__ import annotations

import warnings

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


def _item_by_item(labels: dawid_skene.Labels, gold: np.ndarray, start: np.ndarray | None = None) -> tuple:
    """EM over every item (no patterns): the model's definition step by step, as a reference. Its prior, confusion
    matrices, posteriors and the raters' accuracies."""
    k, raters, n = labels.classes, len(labels.raters), len(labels.items)
    cell = labels.rater * k + labels.label

    def clamp(posterior: np.ndarray) -> np.ndarray:
        posterior = posterior.copy()
        posterior[gold >= 0] = np.eye(k)[gold[gold >= 0]]
        return posterior

    def m_step(posterior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = np.stack([np.bincount(cell, weights=posterior[labels.item, c], minlength=raters * k)
                           for c in range(k)], axis=1).reshape(raters, k, k)
        return counts, np.clip(counts, 1e-10, None) / np.clip(counts, 1e-10, None).sum(axis=1, keepdims=True)

    if start is None:
        start = labels.vote_counts() / labels.vote_counts().sum(axis=1, keepdims=True)
    posterior = clamp(start)
    prior, (_, confusion) = posterior.mean(axis=0), m_step(posterior)
    bound = -np.inf
    for _ in range(dawid_skene.MAX_ITERATIONS):
        logs = np.log(confusion).reshape(-1, k)[cell]
        per_item = np.stack([np.bincount(labels.item, weights=logs[:, c], minlength=n) for c in range(k)], axis=1)
        posterior = clamp(dawid_skene.softmax_rows(np.log(np.clip(prior, 1e-10, None)) + per_item))
        prior = posterior.mean(axis=0)
        counts, confusion = m_step(posterior)
        clipped = np.clip(posterior, 1e-10, None)
        new_bound = (float((counts * np.log(confusion)).sum()) + float(counts.sum(axis=(0, 1)) @ np.log(
            np.clip(prior, 1e-10, None))) - float((np.log(clipped) * clipped).sum())) / float(counts.sum())
        if new_bound - bound < dawid_skene.TOLERANCE:
            break
        bound = new_bound
    right = np.bincount(labels.rater, weights=posterior[labels.item, labels.label], minlength=raters)
    return prior, confusion, posterior, right / np.bincount(labels.rater, minlength=raters)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), raters=st.integers(1, 4), overlap=st.floats(0.3, 1.0),
       golds=st.integers(0, 20), items=st.integers(1, 300))
def test_fitting_each_pattern_once_is_fitting_every_item(seed: int, raters: int, overlap: float, golds: int,
                                                          items: int) -> None:
    """Items holding the same labels are fitted once, weighted by their number: the same fit and the same bootstrap
    as EM over every item, gold items (of either class, even against their labels) included."""
    rng = np.random.default_rng(seed)
    _, frame = simulate(tuple(rng.uniform(0.5, 0.99, raters)), items, seed=seed, overlap=overlap)
    if frame.empty:
        return
    frame = pd.concat([frame, frame.sample(frac=0.1, random_state=seed)])  # a rater's second label on an item
    labels = dawid_skene.Labels.of(frame["task"].tolist(), frame["worker"].tolist(), frame["label"].tolist())
    gold = {item: int(rng.integers(0, 2)) for item in rng.choice(labels.items, min(golds, len(labels.items)))}
    gold_codes = np.array([gold.get(item, -1) for item in labels.items])
    fitted = dawid_skene.fit(labels, gold=gold)
    prior, confusion, posterior, accuracy = _item_by_item(labels, gold_codes)
    assert np.allclose(fitted.prior, prior, rtol=0, atol=1e-9)
    assert np.allclose(fitted.confusion, confusion, rtol=0, atol=1e-9)
    assert np.allclose(fitted.posterior, posterior, rtol=0, atol=1e-9)
    assert np.allclose(fitted.accuracy, accuracy, rtol=0, atol=1e-9, equal_nan=True)
    assert list(fitted.items_labelled) == [frame.loc[frame["worker"] == rater, "task"].nunique()
                                           for rater in labels.raters]
    low, high = dawid_skene.bootstrap_accuracy(labels, gold=gold, resamples=5, seed=seed, start=fitted.posterior)
    draws = np.random.default_rng(seed)
    estimates = []
    for _ in range(5):
        drawn = draws.integers(0, len(labels.items), size=len(labels.items))
        rows = [(new, rater, label) for new, item in enumerate(drawn)
                for rater, label in zip(labels.rater[labels.item == item], labels.label[labels.item == item])]
        sample = dawid_skene.Labels(tuple(range(len(drawn))), labels.raters, *map(np.array, zip(*rows)))
        with np.errstate(invalid="ignore", divide="ignore"):
            estimates.append(_item_by_item(sample, gold_codes[drawn], fitted.posterior[drawn])[3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.allclose(low, np.nanpercentile(estimates, 2.5, axis=0), rtol=0, atol=1e-9, equal_nan=True)
        assert np.allclose(high, np.nanpercentile(estimates, 97.5, axis=0), rtol=0, atol=1e-9, equal_nan=True)
