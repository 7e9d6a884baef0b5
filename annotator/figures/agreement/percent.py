"""Percent agreement: the share of agreeing pairs of labels on an item, averaged over the items with two or more
labels (Fleiss 1971's P-bar; Gwet 2014, Handbook of Inter-Rater Reliability, ch. 2)."""

from __future__ import annotations

import numpy as np

from annotator.figures.agreement.ratings import NO_PAIRS, Coefficient, defined


def percent_agreement(counts: np.ndarray) -> float | None:
    """Mean over items with two or more labels of the share of agreeing pairs of labels (`counts`: items x
    categories); None without such items."""
    raters = counts.sum(axis=1)
    rated = raters >= 2
    if not rated.any():
        return None
    agreeing = (counts[rated] * (counts[rated] - 1)).sum(axis=1)
    return float((agreeing / (raters[rated] * (raters[rated] - 1))).mean())


COEFFICIENT = Coefficient(
    key="percent", label="Percent agreement",
    compute=lambda ratings: defined(percent_agreement(ratings.counts), NO_PAIRS),
    citation="Share of agreeing pairs of labels per item, averaged over items with two or more labels "
             "(Fleiss 1971, P-bar)",
)
