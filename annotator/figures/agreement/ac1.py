"""Gwet's AC1 (Gwet 2008, "Computing inter-rater reliability and its variance in the presence of high
agreement", Eq. 14-15, multiple raters with missing ratings): chance agreement from the categories'
prevalence, so it stays stable when one category dominates. No library we use has it."""

from __future__ import annotations

import numpy as np

from annotator.figures.agreement.percent import percent_agreement
from annotator.figures.agreement.ratings import NO_PAIRS, Coefficient, defined


def gwet_ac1(counts: np.ndarray) -> float | None:
    """Gwet's AC1 from `counts` (items x categories); None without an item with two or more labels."""
    pa = percent_agreement(counts)
    if pa is None:
        return None
    raters = counts.sum(axis=1)
    labelled = raters >= 1
    prevalence = (counts[labelled] / raters[labelled, None]).mean(axis=0)
    k = counts.shape[1]
    pe = float((prevalence * (1 - prevalence)).sum() / (k - 1))
    return (pa - pe) / (1 - pe)


COEFFICIENT = Coefficient(
    key="ac1", label="Gwet's AC1", compute=lambda ratings: defined(gwet_ac1(ratings.counts), NO_PAIRS),
    citation="Gwet (2008), Computing inter-rater reliability and its variance in the presence of high agreement, "
             "Eq. 14-15",
)
