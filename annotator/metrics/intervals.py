"""Confidence intervals and exact tests for the report's proportions (design notes, section 9).

- `wilson`: the 95% score interval of a proportion k/n (Wilson, E. B. 1927, "Probable inference, the law of
  succession, and statistical inference", JASA 22: 209-212). Unlike the normal (Wald) interval it stays inside
  [0, 1] and is not empty at k = 0 or k = n.
- `bootstrap_weights` and `percentile`: the percentile bootstrap (Efron, B. and Tibshirani, R. J. 1993, "An
  Introduction to the Bootstrap", ch. 13): resample the items with replacement, recompute the statistic,
  take the 2.5th and 97.5th percentiles of the resampled values. A resample is drawn as how often each item
  appears in it (a weight matrix), so that a ratio of sums over many rows is one matrix product.
- `mcnemar_exact`: McNemar's test (McNemar, Q. 1947, "Note on the sampling error of the difference between
  correlated proportions or percentages", Psychometrika 12: 153-157) in its exact form: under the null the b
  discordant pairs of one kind among the b + c are Binomial(b + c, 1/2); the two-sided p-value is twice the
  smaller tail, at most 1 (what `scipy.stats.binomtest(b, b + c, 0.5).pvalue` gives).

Plain numbers in, plain numbers out: None with a reason where a value is undefined (n = 0).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Hashable, Sequence

import numpy as np

Z_95 = 1.959963984540054  # the standard normal's 97.5th percentile
LEVEL = 0.95


def wilson(k: int, n: int, *, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval [low, high] of k successes in n trials; None when n is 0.

    centre = (k + z²/2) / (n + z²), half-width = z / (n + z²) * sqrt(k (n - k) / n + z²/4).
    """
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"k must be from 0 to n={n}, got {k}")
    z2 = z * z
    centre = (k + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4)
    # At k = 0 (k = n) the low (high) bound is exactly 0 (1); rounding would leave it a hair off.
    return (0.0 if k == 0 else centre - half), (1.0 if k == n else centre + half)


def mcnemar_exact(b: int, c: int) -> float | None:
    """McNemar's exact two-sided p-value for b and c discordant pairs; None when there are none (b + c = 0).

    Exact in integers: sum of C(n, i) for i <= min(b, c), over 2^(n-1), capped at 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must not be negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return None
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, tail / 2 ** (n - 1))  # int / int: correctly rounded even for n in the thousands


def seed_for(seed: int, items: Sequence[Hashable]) -> np.random.Generator:
    """A generator seeded by `seed` and the item set itself: an item set's resamples are the same whichever
    other rows a report holds (a `--model` filter does not move a row's interval)."""
    digest = zlib.crc32(repr(tuple(items)).encode())
    return np.random.default_rng([seed, len(items), digest])


def bootstrap_weights(n: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """A (resamples x n) matrix: how often each of n items is drawn in each resample of n items with
    replacement. `weights @ values` is then every resample's sum at once."""
    draws = rng.integers(0, n, size=(resamples, n))
    draws += (np.arange(resamples) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n).astype(np.float64)


def percentile(values: np.ndarray, *, level: float = LEVEL) -> np.ndarray:
    """The percentile interval of resampled statistics along axis 0: shape (2, ...) = low, high."""
    tail = (1 - level) / 2 * 100
    return np.percentile(values, [tail, 100 - tail], axis=0)


def as_pair(interval: Sequence[float] | np.ndarray | None) -> list[float] | None:
    """An interval as JSON's `[low, high]` of plain floats (None stays None)."""
    return None if interval is None else [float(interval[0]), float(interval[1])]
