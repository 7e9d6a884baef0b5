"""How good each annotator is: the Dawid-Skene latent-class model of nominal labels, fitted by EM, in numpy.

A. P. Dawid and A. M. Skene, "Maximum Likelihood Estimation of Observer Error-Rates Using the EM Algorithm",
Journal of the Royal Statistical Society, Series C 28(1), 1979, 20-28.

Each item has a true class; each annotator answers class `y` for an item of true class `c` with probability
`confusion[annotator, y, c]` (each column sums to 1), whatever the item. EM alternates the items' posterior
classes (E-step) with the classes' prior and the annotators' confusion matrices (M-step). It follows
`crowdkit.aggregation.DawidSkene` step for step (majority-vote start, the same stopping rule on the evidence
lower bound, gold items clamped to their class after every E-step), so that the two agree; the tests check it.

An annotator's accuracy is the expected share of their labels that are right: the mean, over their labels, of
the posterior probability of the class they gave.

Items holding the same labels from the same raters (and the same gold class) have the same posterior at every step, so
EM runs once per such pattern, weighted by its number of items (`Patterns`): a big project's millions of items hold a
few hundred patterns. A bootstrap sample is then only each pattern's number of drawn items.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

EPS = 1e-10  # the smallest probability: crowd-kit's, so that a class no one gave still has a logarithm
MAX_ITERATIONS = 100
TOLERANCE = 1e-5


@dataclass(frozen=True)
class Labels:
    """Labels as three parallel integer arrays (item, rater, class), with the item and rater keys."""

    items: Sequence[Hashable]  # a tuple, or an array of numbers (a big project's millions of candidate ids)
    raters: tuple[Hashable, ...]
    item: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    classes: int = 2

    @classmethod
    def of(cls, items: Sequence[Hashable], raters: Sequence[Hashable], labels: Sequence[int], *,
           classes: int = 2) -> Labels:
        """From parallel columns, keys in the order they first appear."""
        item_keys, item_codes = _codes(items)
        rater_keys, rater_codes = _codes(raters)
        label = np.asarray(labels, dtype=np.int32)
        if label.size and (label.min() < 0 or label.max() >= classes):
            raise ValueError(f"labels must be classes 0..{classes - 1}")
        return cls(item_keys, tuple(rater_keys), item_codes, rater_codes.astype(np.int32), label, classes)

    def vote_counts(self) -> np.ndarray:
        """items x classes: how many labels of each class each item has."""
        counts = np.zeros((len(self.items), self.classes))
        np.add.at(counts, (self.item, self.label), 1)
        return counts


def _codes(values: Sequence[Hashable]) -> tuple[Sequence[Hashable], np.ndarray]:
    """Each value's code, in the order keys first appear, and the keys (numbers as an array)."""
    if hasattr(values, "dtype"):  # millions of labels read as arrays (or a categorical): coded in C
        import pandas as pd

        codes, keys = pd.factorize(values, sort=False)
        numbers = np.asarray(keys)
        return numbers if numbers.dtype.kind in "iuf" else tuple(keys.tolist()), codes.astype(np.int64, copy=False)
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(value, len(index)) for value in values), dtype=np.int64,
                        count=len(values))
    return tuple(index), codes


@dataclass(frozen=True)
class Fit:
    """A fitted model.

    Attributes:
        prior: the classes' prior probabilities, shape (classes,).
        confusion: raters x given class x true class; `confusion[r, y, c]` = P(rater r says y | true class c).
        posterior: items x classes, each item's posterior probability of each true class.
        accuracy: per rater, the expected share of their labels that are right.
        items_labelled: per rater, how many items they labelled.
        iterations: EM iterations run.
    """

    labels: Labels
    prior: np.ndarray
    confusion: np.ndarray
    posterior: np.ndarray
    accuracy: np.ndarray
    items_labelled: np.ndarray
    iterations: int


def _clamp(posterior: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Gold items (`gold[i]` their class, -1 elsewhere) put at their class with certainty."""
    known = gold >= 0
    if known.any():
        posterior = posterior.copy()
        posterior[known] = 0.0
        posterior[np.flatnonzero(known), gold[known]] = 1.0
    return posterior


@dataclass(frozen=True)
class Patterns:
    """The items grouped by what they hold (the same labels from the same raters, the same gold class).

    Attributes:
        labels: one item per pattern (the first of its items) with its labels; `labels.items` are the patterns.
        gold: per pattern, its gold class or -1.
        first: per pattern, the index of its first item.
        of_item: per item, its pattern.
        weight: per pattern, its number of items.
    """

    labels: Labels
    gold: np.ndarray
    first: np.ndarray
    of_item: np.ndarray
    weight: np.ndarray


def patterns(labels: Labels, gold_codes: np.ndarray) -> Patterns:
    """The items' patterns: each item's sorted labels (rater and class) and gold class folded into one key."""
    n, k = len(labels.items), labels.classes
    base = len(labels.raters) * k + 1
    cell = labels.rater * k + labels.label + 1  # 0: no label there
    order = np.argsort(labels.item * base + cell, kind="stable")
    sizes = np.bincount(labels.item, minlength=n)
    starts = np.cumsum(sizes) - sizes
    key = gold_codes + 1
    for j in range(int(sizes.max(initial=0))):
        digit = np.zeros(n, dtype=np.int64)
        has = sizes > j
        digit[has] = cell[order[starts[has] + j]]
        key = _fold(key, digit, base)
    _, first, of_item = np.unique(key, return_index=True, return_inverse=True)
    of_item = of_item.reshape(-1)
    kept = np.zeros(n, dtype=bool)
    kept[first] = True
    rows = kept[labels.item]
    plain = Labels(np.arange(len(first)), labels.raters, of_item[labels.item[rows]], labels.rater[rows],
                   labels.label[rows], k)
    return Patterns(plain, gold_codes[first], first, of_item, np.bincount(of_item, minlength=len(first)).astype(float))


def _fold(key: np.ndarray, digit: np.ndarray, base: int) -> np.ndarray:
    """`key` extended by one digit below `base`; renumbered first (same keys, same numbers) when it would overflow."""
    if len(key) and int(key.max()) >= (2**62) // base:
        key = np.unique(key, return_inverse=True)[1].reshape(-1)
    return key * base + digit


def expected_counts(labels: Labels, posterior: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """raters x given class x true class: the expected number of each rater's labels of each class on items of
    each true class, given the items' posteriors (each item counting `weight[i]` times)."""
    k = labels.classes
    cell = labels.rater * k + labels.label
    size = len(labels.raters) * k
    weighted = posterior * weight[:, None]
    return np.stack([np.bincount(cell, weights=weighted[labels.item, c], minlength=size) for c in range(k)],
                    axis=1).reshape(len(labels.raters), k, k)


def m_step(counts: np.ndarray) -> np.ndarray:
    """The raters' confusion matrices from their expected counts (normalised per true class)."""
    counts = np.clip(counts, EPS, None)
    return counts / counts.sum(axis=1, keepdims=True)


def log_likelihoods(labels: Labels, prior: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """items x classes: log prior plus the log probability of each item's labels under each true class."""
    k = labels.classes
    logs = np.log(confusion).reshape(-1, k)[labels.rater * k + labels.label]  # labels x classes
    per_item = np.stack([np.bincount(labels.item, weights=logs[:, c], minlength=len(labels.items))
                         for c in range(k)], axis=1)
    return np.log(np.clip(prior, EPS, None)) + per_item


def softmax_rows(log_values: np.ndarray) -> np.ndarray:
    """Each row's probabilities from its logarithms (shifted by its maximum, so that nothing underflows)."""
    scaled = np.exp(log_values - log_values.max(axis=1, keepdims=True))
    return scaled / scaled.sum(axis=1, keepdims=True)


def _lower_bound(counts: np.ndarray, posterior: np.ndarray, weight: np.ndarray, prior: np.ndarray,
                 confusion: np.ndarray) -> float:
    """The evidence lower bound per label, as crowd-kit computes it (the prior counted once per label), from the
    expected counts the confusion matrices were made of: each label's term summed cell by cell."""
    expectation = float((counts * np.log(confusion)).sum())
    expectation += float(counts.sum(axis=(0, 1)) @ np.log(np.clip(prior, EPS, None)))
    clipped = np.clip(posterior, EPS, None)
    entropy = -float(weight @ (np.log(clipped) * clipped).sum(axis=1))
    return (expectation + entropy) / float(counts.sum())


def gold_codes_of(labels: Labels, gold: Mapping[Hashable, int] | None) -> np.ndarray:
    """Per item, its gold class in `gold` {item: class}, or -1 (unknown keys ignored)."""
    codes = np.full(len(labels.items), -1, dtype=np.int64)
    if gold:
        import pandas as pd

        keys = list(gold)
        where = pd.Index(labels.items).get_indexer(keys) if len(labels.items) else np.full(len(keys), -1)
        found = where >= 0
        codes[where[found]] = np.asarray([int(gold[key]) for key in keys], dtype=np.int64)[found]
    return codes


def fit(labels: Labels, *, gold: Mapping[Hashable, int] | None = None, max_iterations: int = MAX_ITERATIONS,
        tolerance: float = TOLERANCE) -> Fit:
    """Fit the model by EM from the majority vote; `gold` {item: class} anchors those items (unknown keys ignored).

    Raises:
        ValueError: on no labels.
    """
    if not labels.label.size:
        raise ValueError("no labels to fit")
    grouped = patterns(labels, gold_codes_of(labels, gold))
    prior, confusion, posterior, iterations = _em(grouped, grouped.weight, start=None,
                                                  max_iterations=max_iterations, tolerance=tolerance)
    return Fit(labels, prior, confusion, posterior[grouped.of_item], rater_accuracy(grouped, posterior),
               _items_labelled(grouped), iterations)


def _em(grouped: Patterns, weight: np.ndarray, *, start: np.ndarray | None, max_iterations: int = MAX_ITERATIONS,
        tolerance: float = TOLERANCE) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """EM's prior, confusion matrices, posteriors (per pattern) and iterations, each pattern counting `weight`
    items (a bootstrap sample's numbers); `start`: the patterns' posteriors to start from, else the majority vote."""
    labels, total = grouped.labels, float(weight.sum())
    if start is None:
        counts = labels.vote_counts()
        start = counts / counts.sum(axis=1, keepdims=True)
    posterior = _clamp(start, grouped.gold)
    prior = weight @ posterior / total
    confusion = m_step(expected_counts(labels, posterior, weight))
    bound, iterations = -np.inf, 0
    while iterations < max_iterations:
        iterations += 1
        posterior = _clamp(softmax_rows(log_likelihoods(labels, prior, confusion)), grouped.gold)
        prior = weight @ posterior / total
        counts = expected_counts(labels, posterior, weight)
        confusion = m_step(counts)
        new_bound = _lower_bound(counts, posterior, weight, prior, confusion)
        if new_bound - bound < tolerance:
            break
        bound = new_bound
    return prior, confusion, posterior, iterations


def rater_accuracy(grouped: Patterns, posterior: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """Per rater, the mean posterior probability of the classes they gave (NaN for a rater with no label), from the
    patterns' posteriors, each pattern counting `weight` items (default: its own number)."""
    labels = grouped.labels
    each = (grouped.weight if weight is None else weight)[labels.item]
    right = posterior[labels.item, labels.label] * each
    total = np.bincount(labels.rater, weights=right, minlength=len(labels.raters))
    given = np.bincount(labels.rater, weights=each, minlength=len(labels.raters))
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / given


def _items_labelled(grouped: Patterns) -> np.ndarray:
    labels, size = grouped.labels, len(grouped.labels.items)
    pairs = np.unique(labels.rater.astype(np.int64) * size + labels.item)
    return np.bincount(pairs // size, weights=grouped.weight[pairs % size],
                       minlength=len(labels.raters)).astype(np.int64)


def posterior_of(prior: np.ndarray, confusions: Sequence[np.ndarray], given: Sequence[int]) -> np.ndarray:
    """One item's posterior over the classes from its labels (`given[j]` by a rater whose confusion matrix is
    `confusions[j]`): the E-step for a single item, for a model fitted earlier."""
    logs = np.log(np.clip(np.asarray(prior, dtype=float), EPS, None))
    for confusion, label in zip(confusions, given, strict=True):
        logs = logs + np.log(np.clip(np.asarray(confusion, dtype=float)[label], EPS, None))
    return softmax_rows(logs[None, :])[0]


def bootstrap_accuracy(labels: Labels, *, gold: Mapping[Hashable, int] | None = None, resamples: int = 200,
                       seed: int = 0, level: float = 0.95, start: np.ndarray | None = None) -> tuple[np.ndarray,
                                                                                                     np.ndarray]:
    """Each rater's accuracy interval (low, high): percentiles of the accuracy refitted on `resamples` samples of
    the items drawn with replacement (seeded), each drawn item with all its labels. NaN for a rater whose
    labels no resample held. `start`: the full fit's posteriors (`Fit.posterior`), from which each refit starts
    (fewer iterations)."""
    grouped = patterns(labels, gold_codes_of(labels, gold))
    begin = None if start is None else start[grouped.first]
    rng = np.random.default_rng(seed)
    estimates = np.full((resamples, len(labels.raters)), np.nan)
    for b in range(resamples):
        drawn = rng.integers(0, len(labels.items), size=len(labels.items))
        weight = np.bincount(grouped.of_item[drawn], minlength=len(grouped.first)).astype(float)
        posterior = _em(grouped, weight, start=begin)[2]
        estimates[b] = rater_accuracy(grouped, posterior, weight)
    tail = (1 - level) / 2 * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a rater no resample held: NaN, said above
        return np.nanpercentile(estimates, tail, axis=0), np.nanpercentile(estimates, 100 - tail, axis=0)
