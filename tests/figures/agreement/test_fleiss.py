"""Fleiss' kappa computed by hand (`annotator/figures/agreement/fleiss.py`) against statsmodels' `fleiss_kappa` (the
test oracle) on generated tables, and on the usual worked example (kappa = 0.210)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from annotator.figures.agreement.fleiss import fleiss_kappa


@st.composite
def tables(draw: st.DrawFn) -> np.ndarray:
    items = draw(st.integers(1, 30))
    categories = draw(st.integers(2, 5))
    raters = draw(st.integers(2, 8))
    rows = [np.bincount(draw(st.lists(st.integers(0, categories - 1), min_size=raters, max_size=raters)),
                        minlength=categories) for _ in range(items)]
    table = np.array(rows)
    if (table.sum(axis=0) > 0).sum() < 2:  # one category only: kappa undefined (the caller says so first)
        table[0] = 0
        table[0, :2] = [raters - 1, 1]
    return table


@settings(max_examples=300, deadline=None)
@given(table=tables())
def test_equals_statsmodels(table: np.ndarray) -> None:
    assert fleiss_kappa(table) == pytest.approx(statsmodels_fleiss(table, method="fleiss"), abs=1e-12)


# The worked example of Fleiss' kappa in the literature's usual presentation (10 items, 14 raters, 5 categories;
# kappa = 0.210), as in Wikipedia's "Fleiss' kappa" article and statsmodels' own tests.
WORKED_EXAMPLE = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_the_worked_example() -> None:
    assert fleiss_kappa(np.array(WORKED_EXAMPLE)) == pytest.approx(0.20993, abs=5e-6)
