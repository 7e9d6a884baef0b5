"""Inter-annotator agreement on nominal labels (`human_check`, `difficulty_eval`).

Ratings are a raters x items matrix with -1 where a rater gave no label. Every coefficient comes from the
library made for it where one exists (Krippendorff's alpha from `krippendorff`, Fleiss' kappa from
`statsmodels`, Cohen's kappa from `scikit-learn`); Gwet's AC1, which none of them has, follows Gwet (2008,
Eq. 14-15, multiple raters with missing ratings). A value that is undefined for the data (one category only,
no item with two raters) is None, and `undefined` says why: never NaN, never 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MISSING = -1
ONE_VALUE = "only one label value occurs"
NO_PAIRS = "no item has labels from two or more annotators"
NO_GOLD = "no gold items"


@dataclass(frozen=True)
class Ratings:
    """Labels as a raters x items matrix (`MISSING` where a rater gave none)."""

    raters: tuple[str, ...]
    items: tuple[Hashable, ...]
    matrix: np.ndarray  # int8, shape (len(raters), len(items))
    categories: tuple[int, ...] = (0, 1)

    @classmethod
    def from_triples(
        cls, triples: Iterable[tuple[Hashable, str, int]], *, categories: Sequence[int] = (0, 1)
    ) -> Ratings:
        """From (item, rater, label) triples; a rater's second label on one item replaces the first."""
        columns = tuple(zip(*triples)) or ((), (), ())
        return cls.from_columns(*columns, categories=categories)

    @classmethod
    def from_columns(
        cls, items: Sequence[Hashable], raters: Sequence[str], labels: Sequence[int], *,
        categories: Sequence[int] = (0, 1),
    ) -> Ratings:
        """From three parallel columns (hash-based, in first-appearance order: fast for 100,000s of labels)."""
        import pandas as pd

        item_codes, item_keys = pd.factorize(pd.Series(items, dtype=object))
        rater_codes, rater_keys = pd.factorize(pd.Series(raters, dtype=object))
        matrix = np.full((len(rater_keys), len(item_keys)), MISSING, dtype=np.int8)
        matrix[rater_codes, item_codes] = np.asarray(labels, dtype=np.int8)
        return cls(tuple(rater_keys), tuple(item_keys), matrix, tuple(categories))

    def counts(self) -> np.ndarray:
        """items x categories: how many raters gave each category to each item."""
        return np.stack([(self.matrix == k).sum(axis=0) for k in self.categories], axis=1)


def _undefined(result: dict[str, Any], key: str, reason: str) -> None:
    result[key] = None
    result.setdefault("undefined", {})[key] = reason


def percent_agreement(counts: np.ndarray) -> float | None:
    """Mean over items with two or more labels of the share of agreeing pairs of labels."""
    raters = counts.sum(axis=1)
    rated = raters >= 2
    if not rated.any():
        return None
    agreeing = (counts[rated] * (counts[rated] - 1)).sum(axis=1)
    return float((agreeing / (raters[rated] * (raters[rated] - 1))).mean())


def gwet_ac1(counts: np.ndarray) -> float | None:
    """Gwet's AC1: chance agreement from the categories' prevalence, stable when one category dominates."""
    raters = counts.sum(axis=1)
    rated = raters >= 2
    if not rated.any():
        return None
    pa = percent_agreement(counts)
    assert pa is not None
    labelled = raters >= 1
    prevalence = (counts[labelled] / raters[labelled, None]).mean(axis=0)
    k = counts.shape[1]
    pe = float((prevalence * (1 - prevalence)).sum() / (k - 1))
    return (pa - pe) / (1 - pe)


def krippendorff_alpha(ratings: Ratings) -> tuple[float | None, str | None]:
    import krippendorff

    data = np.where(ratings.matrix == MISSING, np.nan, ratings.matrix.astype(float))
    try:
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), None
    except ValueError as exc:
        # It raises when one value occurs ("more than one value in the domain") or no unit has two coders.
        return None, ONE_VALUE if "domain" in str(exc) else NO_PAIRS


def fleiss(counts: np.ndarray) -> tuple[float | None, int | None, str | None]:
    """Fleiss' kappa over the items with the most common number of raters (two or more), and that number."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    raters = counts.sum(axis=1)
    numbers, frequency = np.unique(raters[raters >= 2], return_counts=True)
    if not len(numbers):
        return None, None, NO_PAIRS
    n = int(numbers[frequency == frequency.max()].max())  # the larger number on a tie
    table = counts[raters == n]
    if (table.sum(axis=0) > 0).sum() < 2:
        return None, n, ONE_VALUE
    return float(fleiss_kappa(table, method="fleiss")), n, None


def cohen(a: np.ndarray, b: np.ndarray, categories: Sequence[int]) -> tuple[float | None, str | None]:
    """Cohen's kappa of two label vectors of equal length (no missing values).

    Computed from the confusion matrix here rather than with `sklearn.metrics.cohen_kappa_score`, whose
    input checks cost 4 ms a call (hundreds of annotator pairs); the tests check both agree.
    """
    if not len(a):
        return None, "no shared items"
    k = len(categories)
    index = {category: i for i, category in enumerate(categories)}
    codes_a = np.vectorize(index.__getitem__, otypes=[int])(a)
    codes_b = np.vectorize(index.__getitem__, otypes=[int])(b)
    confusion = np.bincount(codes_a * k + codes_b, minlength=k * k).reshape(k, k) / len(a)
    observed = float(np.trace(confusion))
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0))
    if expected == 1:
        return None, ONE_VALUE
    return (observed - expected) / (1 - expected), None


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
    """Each rater against the strict majority of the other raters, on the items where there is one."""
    counts = ratings.counts()
    result = {}
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
            _undefined(result[rater], "kappa_vs_majority", reason)
    return result


def agreement(
    ratings: Ratings, *, medians: dict[str, float] | None = None, gold: dict[str, float] | None = None
) -> dict[str, Any]:
    """Every coefficient for one label, with per-annotator figures (`medians`: each rater's median seconds;
    `gold`: each rater's accuracy on gold items, see `annotator.gold.gold_accuracy`).

    Returns:
        `items, percent, alpha, fleiss_kappa, fleiss_raters, ac1, pairwise: [{a, b, items, kappa}],
        annotators: [{name, labels, items_vs_majority, kappa_vs_majority, median_seconds, gold_accuracy}]`,
        and `undefined: {key: reason}` beside any None value (in the result and in each annotator's row).
    """
    counts = ratings.counts()
    result: dict[str, Any] = {"items": int((counts.sum(axis=1) >= 1).sum())}
    for key, value in (("percent", percent_agreement(counts)), ("ac1", gwet_ac1(counts))):
        result[key] = value
        if value is None:
            _undefined(result, key, NO_PAIRS)
    alpha, reason = krippendorff_alpha(ratings)
    result["alpha"] = alpha
    if reason:
        _undefined(result, "alpha", reason)
    kappa, raters, reason = fleiss(counts)
    result["fleiss_kappa"], result["fleiss_raters"] = kappa, raters
    if reason:
        _undefined(result, "fleiss_kappa", reason)
    result["pairwise"] = pairwise(ratings)
    majority = versus_majority(ratings)
    result["annotators"] = []
    for i, rater in enumerate(ratings.raters):
        row = {"name": rater, "labels": int((ratings.matrix[i] != MISSING).sum()), **majority[rater]}
        row["median_seconds"] = (medians or {}).get(rater)
        row["gold_accuracy"] = (gold or {}).get(rater)
        if row["gold_accuracy"] is None:
            _undefined(row, "gold_accuracy", NO_GOLD)
        result["annotators"].append(row)
    return result


def label_agreement(
    rows: Iterable[tuple[Hashable, str, int, int | None, float | None]], *, gold: dict[str, float] | None = None
) -> dict[str, Any]:
    """Agreement on `human_check` (every labelled item) and on `difficulty_eval` (items with at least two
    `human_check = 1` labels, among the annotators who gave them), from (item, annotator, human_check,
    difficulty_eval, seconds_spent) rows; `gold` is each annotator's gold accuracy (whole label)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=["item", "annotator", "human_check", "difficulty_eval", "seconds"])
    spent = frame.dropna(subset=["seconds"]).groupby("annotator")["seconds"].median()
    medians = {name: float(value) for name, value in spent.items()}
    accepted = frame[(frame["human_check"] == 1) & frame["difficulty_eval"].notna()]
    accepted = accepted[accepted.groupby("item")["item"].transform("size") >= 2]
    return {
        "human_check": agreement(
            Ratings.from_columns(frame["item"], frame["annotator"], frame["human_check"]), medians=medians, gold=gold
        ),
        "difficulty_eval": agreement(
            Ratings.from_columns(accepted["item"], accepted["annotator"], accepted["difficulty_eval"]),
            medians=medians, gold=gold,
        ),
    }
