"""Krippendorff's alpha (nominal), from the `krippendorff` package (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability"); missing labels allowed."""

from __future__ import annotations

import numpy as np

from annotator.figures.agreement.ratings import NO_PAIRS, ONE_VALUE, Coefficient, Ratings, Result


def krippendorff_alpha(ratings: Ratings) -> Result:
    import krippendorff

    # The package's own value counts (units x values, over the values that occur, in order) are the ratings'
    # counts: given directly, it skips building them from a raters x items float matrix (seconds at 1M items).
    occurring = (ratings.counts.sum(axis=0) > 0) if len(ratings.items) else np.zeros(len(ratings.categories), bool)
    domain = np.asarray(ratings.categories)[occurring]
    try:
        return Result(float(krippendorff.alpha(value_counts=ratings.counts[:, occurring], value_domain=domain,
                                               level_of_measurement="nominal")))
    except ValueError as exc:
        # It raises when one value occurs ("more than one value in the domain") or no unit has two coders.
        return Result(None, ONE_VALUE if "domain" in str(exc) else NO_PAIRS)


COEFFICIENT = Coefficient(
    key="alpha", label="Krippendorff's alpha", compute=krippendorff_alpha,
    citation="Krippendorff (2011), Computing Krippendorff's alpha-reliability; nominal, missing labels allowed",
)
