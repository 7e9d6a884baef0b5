"""Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal scales") between two label vectors: for
every pair of annotators with shared items (`pairwise`) and for each annotator against the strict majority of
the others (`versus_majority`). Tables rather than one figure, so `agreement` asks for them by name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from annotator.figures.agreement.ratings import MISSING, ONE_VALUE, Ratings

NO_SHARED = "no shared items"


def cohen(a: np.ndarray, b: np.ndarray, categories: Sequence[int]) -> tuple[float | None, str | None]:
    """Cohen's kappa of two label vectors of equal length (no missing values), or None and why.

    Computed from the confusion matrix here rather than with `sklearn.metrics.cohen_kappa_score`, whose
    input checks cost 4 ms a call (hundreds of annotator pairs); the tests check both agree.
    """
    if not len(a):
        return None, NO_SHARED
    k = len(categories)
    codes_a, codes_b = _codes(a, categories), _codes(b, categories)
    confusion = np.bincount(codes_a * k + codes_b, minlength=k * k).reshape(k, k) / len(a)
    observed = float(np.trace(confusion))
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0))
    if expected == 1:
        return None, ONE_VALUE
    return (observed - expected) / (1 - expected), None


def _codes(values: np.ndarray, categories: Sequence[int]) -> np.ndarray:
    """Each value's index in `categories` (a value not among them is a KeyError, as a dict lookup would be)."""
    ordered = np.asarray(categories)
    order = np.argsort(ordered, kind="stable")
    found = np.searchsorted(ordered[order], values)
    found = np.minimum(found, len(ordered) - 1)
    if len(values) and not (ordered[order][found] == values).all():
        raise KeyError(f"a label outside {tuple(categories)}")
    return order[found]


def pairwise(ratings: Ratings) -> list[dict[str, Any]]:
    """Cohen's kappa for every pair of raters with shared items."""
    rows = []
    m = ratings.matrix
    for i in range(len(ratings.raters)):
        for j in range(i + 1, len(ratings.raters)):
            shared = (m[i] != MISSING) & (m[j] != MISSING)
            if not shared.any():
                continue
            kappa, reason = cohen(m[i, shared], m[j, shared], ratings.categories)
            row = {"a": ratings.raters[i], "b": ratings.raters[j], "items": int(shared.sum()), "kappa": kappa}
            if reason:
                row["reason"] = reason
            rows.append(row)
    return rows


def versus_majority(ratings: Ratings) -> dict[str, dict[str, Any]]:
    """Each rater against the strict majority of the other raters, on the items where there is one:
    `{rater: {items_vs_majority, kappa_vs_majority[, undefined]}}`."""
    counts = ratings.counts
    result: dict[str, dict[str, Any]] = {}
    for i, rater in enumerate(ratings.raters):
        mine = ratings.matrix[i]
        others = counts.copy()
        labelled = mine != MISSING
        others[labelled, np.searchsorted(ratings.categories, mine[labelled])] -= 1
        top = others.max(axis=1)
        strict = (top * 2 > others.sum(axis=1)) & labelled
        majority = np.asarray(ratings.categories)[others.argmax(axis=1)]
        kappa, reason = cohen(mine[strict], majority[strict], ratings.categories)
        result[rater] = {"items_vs_majority": int(strict.sum()), "kappa_vs_majority": kappa}
        if reason:
            result[rater]["undefined"] = {"kappa_vs_majority": reason}
    return result
