"""Wilson intervals, MOVER, Newcombe's paired interval, McNemar's exact test and the bootstrap's draws, against
independent computations (statsmodels' `proportion_confint(method="wilson")`, scipy's `binomtest`, a published
worked example) and by their exact coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, binomtest, multinomial
from statsmodels.stats.proportion import proportion_confint

from annotator.figures.agreement.intervals import (
    bootstrap_weights,
    mcnemar_exact,
    mover,
    newcombe_paired,
    percentile,
    seed_for,
    wilson,
)

CASES = [(0, 1), (1, 1), (0, 30), (21, 30), (3, 30), (30, 30), (52, 132), (3, 132), (0, 132), (707, 1415),
         (1, 56_600), (28_000, 56_600)]


@pytest.mark.parametrize(("k", "n"), CASES)
def test_wilson_is_statsmodels(k: int, n: int) -> None:
    low, high = wilson(k, n)
    expected = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx(expected, abs=1e-12)
    scipy_ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((scipy_ci.low, scipy_ci.high), abs=1e-12)
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


def test_mover_of_a_mean_is_zou_and_donners_formula_and_never_a_point() -> None:
    """Right on all 3 solvable items, wrong on all 5 unsolvable ones: Prec 0.5 with an interval of width."""
    (la, ua), (lu, uu) = proportion_confint(3, 3, method="wilson"), proportion_confint(0, 5, method="wilson")
    low, high = mover([(0.5, 1.0, la, ua), (0.5, 0.0, lu, uu)])
    assert low == pytest.approx(0.5 - np.hypot(0.5 * (1 - la), 0.5 * 0), abs=1e-12)
    assert high == pytest.approx(0.5 + np.hypot(0.5 * 0, 0.5 * uu), abs=1e-12)
    assert 0 < low < 0.5 < high < 1
    # A negative weight takes the other side's distance: p1 - p2 of independent estimates (Newcombe's method 10
    # for unpaired proportions).
    low, high = mover([(1.0, 0.7, 0.5, 0.85), (-1.0, 0.4, 0.2, 0.6)])
    assert (low, high) == pytest.approx((0.3 - np.hypot(0.2, 0.2), 0.3 + np.hypot(0.15, 0.2)))
    with pytest.raises(ValueError, match="two terms"):
        mover([(1.0, 0.5, 0.4, 0.6)] * 3, correlation=0.5)


def test_newcombe_paired_is_the_published_example() -> None:
    """Fagerland, Lydersen and Laake (2017, "Statistical Analysis of Contingency Tables", ch. 8) print Newcombe's
    square-and-add interval for Cavo et al. (2012)'s table [[59, 6], [16, 80]]: -0.0621 (-0.1186 to -0.0046)."""
    low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    # Without the correlation the interval is wider: the pairing is what narrows it.
    p1, p2 = 65 / 161, 75 / 161
    unpaired = mover([(1.0, p1, *wilson(65, 161)), (-1.0, p2, *wilson(75, 161))])  # type: ignore[misc]
    assert unpaired[0] < low and high < unpaired[1]
    # Every item a success for both: a difference of 0 with an interval of width, and None without items.
    low, high = newcombe_paired(10, 0, 0, 0)
    assert low < 0 < high and low == pytest.approx(-high)
    assert newcombe_paired(0, 0, 0, 0) is None
    with pytest.raises(ValueError, match="must not be negative"):
        newcombe_paired(1, -1, 0, 0)


GRID = np.linspace(0, 1, 21)  # true proportions 0, 0.05, .., 1


def _mover_coverage(n_a: int, n_u: int) -> np.ndarray:
    """The exact coverage of MOVER's 95% interval for (p_A + p_U) / 2 at every (p_A, p_U) of GRID x GRID."""
    w_a, w_u = [wilson(k, n_a) for k in range(n_a + 1)], [wilson(k, n_u) for k in range(n_u + 1)]
    low, high = np.empty((n_a + 1, n_u + 1)), np.empty((n_a + 1, n_u + 1))
    for a in range(n_a + 1):
        for u in range(n_u + 1):
            low[a, u], high[a, u] = mover([(0.5, a / n_a, *w_a[a]), (0.5, u / n_u, *w_u[u])])  # type: ignore[misc]
    p_a = binom.pmf(np.arange(n_a + 1)[None, :], n_a, GRID[:, None])  # grid x outcomes
    p_u = binom.pmf(np.arange(n_u + 1)[None, :], n_u, GRID[:, None])
    coverage = np.empty((len(GRID), len(GRID)))
    for t in range(2 * len(GRID) - 1):  # each true mean t / 40 once, for every (i, j) with i + j = t
        mean = t / (2 * (len(GRID) - 1))
        holds = ((low <= mean) & (mean <= high)).astype(float)
        i = np.arange(max(0, t - len(GRID) + 1), min(t, len(GRID) - 1) + 1)
        coverage[i, t - i] = np.einsum("ik,ik->i", p_a[i] @ holds, p_u[t - i])
    return coverage


def test_mover_coverage_is_exact_and_near_95_percent_from_one_item() -> None:
    """Coverage checked exactly, not by random simulation: for every pair of set sizes n_A <= n_U from 1 to 50
    items (the interval is symmetric in the two sets), every outcome (k_A, k_U) is enumerated with its binomial
    probability and its interval computed by `mover` over `wilson`; the coverage at a true (p_A, p_U) on the 0.05
    grid from 0 to 1 is the probability of the outcomes whose interval holds (p_A + p_U) / 2.

    Averaged over the grid, coverage is at least 94% for every pair of sizes. At single grid points it dips below
    (the binomial's discreteness: Wilson's own interval does the same, Brown, Cai and DasGupta 2001), to 80% at one
    item per set (p_A = 0, p_U = 0.2: an S on the one U item gives [0.103, 0.897], which misses 0.1) and stays
    at least 90% once both sets have 19 items;
    an interval that never collapses is what keeps it there (a set's bootstrap interval is a point whenever its
    items all have one verdict, which at p = 0 or 1 is every time)."""
    for n_a in range(1, 51):
        for n_u in range(n_a, 51):
            coverage = _mover_coverage(n_a, n_u)
            assert coverage.mean() >= 0.94, (n_a, n_u)
            assert coverage.min() >= (0.90 if n_a >= 19 else 0.80 - 1e-12), (n_a, n_u)
    assert np.allclose(_mover_coverage(7, 3), _mover_coverage(3, 7).T)


def _paired_outcomes(n: int) -> np.ndarray:
    """Every 2x2 table of n paired items: (both, first only, second only, neither)."""
    return np.array([(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a)
                     for c in range(n + 1 - a - b)])


def _paired_truths() -> list[tuple[float, np.ndarray]]:
    """True differences p1 - p2 with their cell probabilities: p1, p2 on the 0.1 grid, and for each pair five
    joint probabilities of success under both, from the least to the most the margins allow."""
    truths = []
    for p1 in np.linspace(0, 1, 11):
        for p2 in np.linspace(0, 1, 11):
            for both in np.unique(np.linspace(max(0.0, p1 + p2 - 1), min(p1, p2), 5).round(12)):
                cells = np.clip([both, p1 - both, p2 - both, 1 - p1 - p2 + both], 0, 1)
                truths.append((p1 - p2, cells / cells.sum()))
    return truths


def test_newcombe_paired_coverage_is_exact_and_near_95_percent() -> None:
    """Coverage checked exactly, not by random simulation: for n paired items every 2x2 table is enumerated with
    its multinomial probability and its interval computed by `newcombe_paired`; at every true (p1, p2, joint
    success) of `_paired_truths` the coverage is the probability of the tables whose interval holds p1 - p2.
    Averaged over those truths, coverage is at least 94% from 2 items on (at 1 item, 93%); at single truths it
    dips, as Newcombe (1998) reports for every method of his, and stays at least 85% from 5 items on and at
    least 90% from 20 on. `report --compare` combines two such intervals, the A set's and the U set's, by the
    MOVER whose coverage the test above checks."""
    truths = _paired_truths()
    for n in (1, 2, 3, 4, 5, 8, 13, 20, 30):
        tables = _paired_outcomes(n)
        intervals = np.array([newcombe_paired(*map(int, table)) for table in tables])
        coverage = np.array([
            multinomial.pmf(tables, n, cells)[(intervals[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= intervals[:, 1])]
            .sum() for truth, cells in truths])
        assert coverage.mean() >= (0.94 if n >= 2 else 0.93), n
        assert coverage.min() >= (0.90 if n >= 20 else 0.85 if n >= 5 else 0.0), n
