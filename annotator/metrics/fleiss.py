"""Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters"), from `statsmodels`. It
needs the same number of raters on every item: it runs over the items with the most common number of raters
(two or more), and reports that number (`fleiss_raters`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from annotator.metrics.ratings import NO_PAIRS, ONE_VALUE, Coefficient, Result

RATERS = "fleiss_raters"  # the report's key for the number of raters it ran over


def fleiss(counts: np.ndarray) -> Result:
    """Fleiss' kappa over the items with the most common number of raters (two or more), and that number."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    raters = counts.sum(axis=1)
    numbers, frequency = np.unique(raters[raters >= 2], return_counts=True)
    if not len(numbers):
        return Result(None, NO_PAIRS, {RATERS: None})
    n = int(numbers[frequency == frequency.max()].max())  # the larger number on a tie
    table = counts[raters == n]
    if (table.sum(axis=0) > 0).sum() < 2:
        return Result(None, ONE_VALUE, {RATERS: n})
    return Result(float(fleiss_kappa(table, method="fleiss")), None, {RATERS: n})


def _note(block: Mapping[str, Any]) -> str | None:
    return f"over the items with {block[RATERS]} labels" if block.get(RATERS) else None


COEFFICIENT = Coefficient(
    key="fleiss_kappa", label="Fleiss' kappa", compute=lambda ratings: fleiss(ratings.counts), note=_note,
    citation="Fleiss (1971), Measuring nominal scale agreement among many raters; over the items with the most "
             "common number of labels",
)
