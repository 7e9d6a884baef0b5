"""Wilson intervals, McNemar's exact test and the bootstrap's draws, against independent computations
(statsmodels' `proportion_confint(method="wilson")`, scipy's `binomtest`)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from annotator.metrics.intervals import bootstrap_weights, mcnemar_exact, percentile, seed_for, wilson

CASES = [(0, 1), (1, 1), (0, 30), (21, 30), (3, 30), (30, 30), (52, 132), (3, 132), (0, 132), (707, 1415),
         (1, 56_600), (28_000, 56_600)]


@pytest.mark.parametrize(("k", "n"), CASES)
def test_wilson_is_statsmodels(k: int, n: int) -> None:
    low, high = wilson(k, n)
    expected = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx(expected, abs=1e-12)
    assert 0 <= low <= k / n <= high <= 1


def test_wilson_is_undefined_without_trials_and_refuses_impossible_counts() -> None:
    assert wilson(0, 0) is None
    with pytest.raises(ValueError, match="k must be from 0 to n=3"):
        wilson(4, 3)


def test_thirty_items_give_an_interval_about_a_third_wide() -> None:
    """The caption's claim: with 30 items a Wilson interval is about ±0.16 wide (widest at one half)."""
    low, high = wilson(15, 30)
    assert (high - low) / 2 == pytest.approx(0.16, abs=0.01)


@pytest.mark.parametrize(("b", "c"), [(0, 1), (1, 0), (3, 3), (18, 0), (0, 18), (5, 12), (40, 61), (600, 700),
                                      (1, 1400), (700, 715)])
def test_mcnemar_is_scipy_binomtest(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9, abs=1e-300)


def test_mcnemar_without_discordant_pairs_is_undefined() -> None:
    assert mcnemar_exact(0, 0) is None
    with pytest.raises(ValueError, match="must not be negative"):
        mcnemar_exact(-1, 2)


def test_bootstrap_weights_draw_n_items_per_resample_with_the_seed() -> None:
    items = [(1, -1), (2, -1), (3, 7)]
    weights = bootstrap_weights(3, 500, seed_for(0, items))
    assert weights.shape == (500, 3) and (weights.sum(axis=1) == 3).all()
    # Each item is drawn once per resample on average, and some resamples leave an item out.
    assert weights.mean() == pytest.approx(1, abs=0.1) and (weights == 0).any()
    assert (bootstrap_weights(3, 500, seed_for(0, items)) == weights).all()
    assert not (bootstrap_weights(3, 500, seed_for(1, items)) == weights).all()
    assert not (bootstrap_weights(3, 500, seed_for(0, items[:2] + [(3, 8)])) == weights).all()


def test_percentile_interval_is_numpys_2_5th_and_97_5th() -> None:
    values = np.arange(1001, dtype=float).reshape(-1, 1) * np.array([1.0, 2.0])
    low, high = percentile(values)
    assert list(low) == pytest.approx([25.0, 50.0]) and list(high) == pytest.approx([975.0, 1950.0])
