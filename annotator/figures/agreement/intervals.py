"""Confidence intervals and exact tests for the report's proportions (design notes, section 9).

- `wilson`: the 95% score interval of a proportion k/n (Wilson, E. B. 1927, "Probable inference, the law of
  succession, and statistical inference", JASA 22: 209-212). Unlike the normal (Wald) interval it stays inside
  [0, 1] and is not empty at k = 0 or k = n.
- `bootstrap_weights` and `percentile`: the percentile bootstrap (Efron, B. and Tibshirani, R. J. 1993, "An
  Introduction to the Bootstrap", ch. 13): resample the items with replacement, recompute the statistic,
  take the 2.5th and 97.5th percentiles of the resampled values. A resample is drawn as how often each item
  appears in it (a weight matrix), so that a ratio of sums over many rows is one matrix product.
- `mover`: the MOVER limits of a linear combination sum(c_i p_i) of independent estimates, each with its own
  interval (Zou, G. Y. and Donner, A. 2008, "Construction of confidence limits about effect measures: a general
  approach", Stat Med 27: 1693-1702): L = sum c_i p_i - sqrt(sum (c_i (p_i - l_i))²), U likewise with the upper
  distances, a negative c_i taking the other side's distance. With Wilson limits for Prec(A) and Prec(U) it gives
  Prec's interval, never a point: a Wilson interval is never one, even at k = 0 or k = n.
- `newcombe_paired`: the difference of two proportions on the same items (Newcombe, R. G. 1998, "Improved
  confidence intervals for the difference between binomial proportions based on paired data", Stat Med 17:
  2635-2650, method 10): each proportion's Wilson interval combined as MOVER does, with the phi coefficient of the
  2x2 table as their correlation (shrunk by n/2 towards 0 when positive, 0 where a margin is empty).
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


def mover(
    terms: Sequence[tuple[float, float, float, float]], *, correlation: float = 0.0
) -> tuple[float, float]:
    """The MOVER interval of sum(c_i p_i) from (c_i, p_i, l_i, u_i) terms, each p_i's interval [l_i, u_i].

    The terms are independent, or (Newcombe's paired difference, c = 1 and -1) the two estimates correlate by
    `correlation`: the cross term -2 r d_1 d_2 enters each side's sum of squares.
    """
    if correlation and len(terms) != 2:
        raise ValueError("a correlation goes with two terms")
    estimate = sum(c * p for c, p, _, _ in terms)
    below = [c * (p - low) if c >= 0 else -c * (high - p) for c, p, low, high in terms]
    above = [c * (high - p) if c >= 0 else -c * (p - low) for c, p, low, high in terms]

    def spread(distances: list[float]) -> float:
        cross = -2 * correlation * distances[0] * distances[1] if correlation else 0.0
        return math.sqrt(max(sum(d * d for d in distances) + cross, 0.0))

    return estimate - spread(below), estimate + spread(above)


def newcombe_paired(both: int, first_only: int, second_only: int, neither: int) -> tuple[float, float] | None:
    """Newcombe's interval (method 10) for p1 - p2 on paired items: `both` items succeed under both, `first_only`
    under the first alone, and so on; None without items.

    p1 = (both + first_only) / n, p2 = (both + second_only) / n, each with its Wilson interval; phi =
    (both * neither - first_only * second_only) / sqrt(product of the four margins), its numerator less n/2 when
    above n/2 and 0 from 0 to n/2, phi 0 when a margin is 0.
    """
    counts = (both, first_only, second_only, neither)
    if min(counts) < 0:
        raise ValueError(f"counts must not be negative, got {counts}")
    n = sum(counts)
    if n == 0:
        return None
    k1, k2 = both + first_only, both + second_only
    (l1, u1), (l2, u2) = wilson(k1, n), wilson(k2, n)  # type: ignore[misc]
    margins = k1 * (n - k1) * k2 * (n - k2)
    cross = both * neither - first_only * second_only
    shrunk = cross - n / 2 if cross > n / 2 else min(cross, 0)
    phi = shrunk / math.sqrt(margins) if margins else 0.0
    # p1 - p2 as the terms (1, p1) and (-1, p2): MOVER's sides are those of Newcombe's formula.
    return mover([(1.0, k1 / n, l1, u1), (-1.0, k2 / n, l2, u2)], correlation=phi)


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
