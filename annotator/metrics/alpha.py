"""Krippendorff's alpha (nominal), from the `krippendorff` package (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability"); missing labels allowed."""

from __future__ import annotations

import numpy as np

from annotator.metrics.ratings import MISSING, NO_PAIRS, ONE_VALUE, Coefficient, Ratings, Result


def krippendorff_alpha(ratings: Ratings) -> Result:
    import krippendorff

    data = np.where(ratings.matrix == MISSING, np.nan, ratings.matrix.astype(float))
    try:
        return Result(float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")))
    except ValueError as exc:
        # It raises when one value occurs ("more than one value in the domain") or no unit has two coders.
        return Result(None, ONE_VALUE if "domain" in str(exc) else NO_PAIRS)


COEFFICIENT = Coefficient(
    key="alpha", label="Krippendorff's alpha", compute=krippendorff_alpha,
    citation="Krippendorff (2011), Computing Krippendorff's alpha-reliability; nominal, missing labels allowed",
)
