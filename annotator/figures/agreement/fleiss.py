"""Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters", Eq. 2-9). It needs the same
number of raters on every item: it runs over the items with the most common number of raters (two or more), and
reports that number (`fleiss_raters`). Computed here (a few lines of numpy) rather than with statsmodels, whose
import costs over a second and which, with scipy, would be 200 MB of runtime install for this one call; the tests
check it against `statsmodels.stats.inter_rater.fleiss_kappa`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from annotator.figures.agreement.ratings import NO_PAIRS, ONE_VALUE, Coefficient, Result

RATERS = "fleiss_raters"  # the report's key for the number of raters it ran over


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of an items x categories table of counts, every item rated by the same number n >= 2.

    P_i = sum_j n_ij (n_ij - 1) / (n (n - 1)) is an item's agreement and P-bar their mean; p_j = the share of all
    ratings in category j and P-bar_e = sum_j p_j^2 the agreement expected by chance; kappa = (P-bar - P-bar_e) /
    (1 - P-bar_e).
    """
    table = np.asarray(table, dtype=float)
    n = table[0].sum()
    shares = table.sum(axis=0) / table.sum()
    observed = float(((table * (table - 1)).sum(axis=1) / (n * (n - 1))).mean())
    chance = float((shares**2).sum())
    return (observed - chance) / (1 - chance)


def fleiss(counts: np.ndarray) -> Result:
    """Fleiss' kappa over the items with the most common number of raters (two or more), and that number."""
    raters = counts.sum(axis=1)
    numbers, frequency = np.unique(raters[raters >= 2], return_counts=True)
    if not len(numbers):
        return Result(None, NO_PAIRS, {RATERS: None})
    n = int(numbers[frequency == frequency.max()].max())  # the larger number on a tie
    table = counts[raters == n]
    if (table.sum(axis=0) > 0).sum() < 2:
        return Result(None, ONE_VALUE, {RATERS: n})
    return Result(fleiss_kappa(table), None, {RATERS: n})


def _note(block: Mapping[str, Any]) -> str | None:
    return f"over the items with {block[RATERS]} labels" if block.get(RATERS) else None


COEFFICIENT = Coefficient(
    key="fleiss_kappa", label="Fleiss' kappa", compute=lambda ratings: fleiss(ratings.counts), note=_note,
    citation="Fleiss (1971), Measuring nominal scale agreement among many raters; over the items with the most "
             "common number of labels",
)
