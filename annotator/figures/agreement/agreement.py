"""Inter-annotator agreement on nominal labels (`human_check`, `difficulty_eval`): every coefficient of
`registry.COEFFICIENTS` over all annotators, Cohen's kappa per pair and per annotator against the majority, and
each annotator's pace and gold accuracy.

A value that is undefined for the data is None, and the block's `undefined` says why: never NaN, never 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from operator import itemgetter
from typing import Any

import numpy as np

from annotator.figures.agreement.cohen import pairwise, versus_majority
from annotator.figures.agreement.ratings import MISSING, Ratings
from annotator.figures.agreement.registry import COEFFICIENTS

NO_GOLD = "no gold items"


def _undefined(result: dict[str, Any], key: str, reason: str) -> None:
    result[key] = None
    result.setdefault("undefined", {})[key] = reason


def agreement(
    ratings: Ratings, *, medians: dict[str, float] | None = None, gold: dict[str, float] | None = None
) -> dict[str, Any]:
    """Every coefficient for one label, with per-annotator figures (`medians`: each rater's median seconds;
    `gold`: each rater's accuracy on gold items, see `annotator.labelling.gold.gold_accuracy`).

    Returns:
        `items`, each coefficient's value under its key (`percent, alpha, fleiss_kappa, ac1`) with its extra
        keys (`fleiss_raters`), `pairwise: [{a, b, items, kappa}],
        annotators: [{name, labels, items_vs_majority, kappa_vs_majority, median_seconds, gold_accuracy}]`,
        and `undefined: {key: reason}` beside any None value (in the result and in each annotator's row).
    """
    result: dict[str, Any] = {"items": int((ratings.counts.sum(axis=1) >= 1).sum())}
    for coefficient in COEFFICIENTS:
        computed = coefficient.compute(ratings)
        result[coefficient.key] = computed.value
        result.update(computed.extra)
        if computed.value is None and computed.reason:
            _undefined(result, coefficient.key, computed.reason)
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


def _frame(rows: Iterable[tuple[Hashable, str, int, int | None, float | None]]) -> Any:
    """The rows as a frame, column by column: pandas' row-wise construction is slow on millions of labels."""
    import pandas as pd

    rows = rows if isinstance(rows, list) else list(rows)
    items, annotators, checks, difficulties, seconds = (list(map(itemgetter(i), rows)) for i in range(5))
    return pd.DataFrame({
        "item": items, "annotator": pd.Series(annotators, dtype=object),
        "human_check": np.fromiter(checks, dtype=np.int64, count=len(checks)),
        "difficulty_eval": np.array(difficulties, dtype=np.float64),  # None -> NaN
        "seconds": np.array(seconds, dtype=np.float64),
    })


def label_agreement(
    rows: Iterable[tuple[Hashable, str, int, int | None, float | None]], *, gold: dict[str, float] | None = None
) -> dict[str, Any]:
    """Agreement on `human_check` (every labelled item) and on `difficulty_eval` (items with at least two
    `human_check = 1` labels, among the annotators who gave them), from (item, annotator, human_check,
    difficulty_eval, seconds_spent) rows, or a frame of those columns (`accuracy.label_frame`); `gold` is each
    annotator's gold accuracy (whole label)."""
    import pandas as pd

    frame = rows if isinstance(rows, pd.DataFrame) else _frame(rows)
    items, annotators, checks = frame["item"], frame["annotator"], frame["human_check"]
    # Column by column (no copy of the frame): the median skips the labels without a time.
    spent = frame["seconds"].astype("float64").groupby(annotators, observed=True, sort=False).median()
    medians = {name: float(value) for name, value in spent.items() if value == value}  # NaN: no time at all
    difficulty = frame["difficulty_eval"].astype("float64")
    accepted = (checks == 1) & difficulty.notna()
    accepted_items = items[accepted]
    twice = (accepted_items.groupby(accepted_items, sort=False).transform("size") >= 2).to_numpy()
    return {
        "human_check": agreement(Ratings.from_columns(items, annotators, checks), medians=medians, gold=gold),
        "difficulty_eval": agreement(
            Ratings.from_columns(accepted_items[twice], annotators[accepted][twice], difficulty[accepted][twice]),
            medians=medians, gold=gold,
        ),
    }
