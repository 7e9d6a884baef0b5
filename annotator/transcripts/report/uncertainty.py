"""How sure the report's figures are (design notes, section 9): intervals on each row, and two models compared.

- Prec(A), Prud(A), Prec(U), Prud(U) get 95% Wilson score intervals (Wilson 1927) over their responses
  (`annotator.figures.agreement.intervals.wilson`). With several samples per item these treat responses as independent;
  the bootstrap below does not.
- Prec and Prud, means of two proportions on different item sets: with one response per item (`ci_method`
  "mover-wilson"), MOVER over the two Wilson intervals (Zou and Donner 2008, `intervals.mover`), an interval that
  is never a point, even when every item of a set has the same verdict; with several responses to an item
  ("bootstrap"), a percentile bootstrap interval (Efron and Tibshirani 1993) that resamples the A items and the U
  items separately, items and not samples: a resampled item brings all its responses. Each resample recomputes
  Prec(A) = sum S / sum responses over its items, the same ratio as the point value.
- `compare`: two models on the items both answered (per prompt): the differences in Prec and Prud with an
  interval, with one response per item Newcombe's paired interval for each set (Newcombe 1998, method 10) combined
  by MOVER ("newcombe-mover"), else a paired bootstrap (one resample of items applied to both models); and
  McNemar's exact test (McNemar 1947) on each of the four proportions, an item counting as a success for a model
  when most of its responses are (with one sample per item, the textbook pairing).

Resamples are drawn per item set with a generator seeded by the seed and that set (`intervals.seed_for`), so
rows that share items (every model on the same release) share one weight matrix, one matrix product serves
them all, and a row's interval does not depend on which other rows the report holds. A set of more than
`EXACT_ITEMS` items, or a big report's (`counting.Counts.bins`), is resampled from how many of its items have
each [S, R, F] count, the same bootstrap drawn in resamples x bins numbers instead of resamples x items
(`_Resampled`); its interval is as likely as the item-by-item one but not equal to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from annotator.figures.agreement.intervals import (
    as_pair,
    bootstrap_weights,
    mcnemar_exact,
    mover,
    newcombe_paired,
    percentile,
    seed_for,
    wilson,
)

RESAMPLES = 2_000
CI_KEYS = ("prec_a_ci", "prud_a_ci", "prec_u_ci", "prud_u_ci", "prec_ci", "prud_ci")
PROPORTIONS = ("prec_a", "prud_a", "prec_u", "prud_u")
# (unsolvable, (problem_id, candidate_id or -1)) -> [S, R, F] responses
Items = dict[tuple[bool, tuple[int, int]], list[int]]
# (unsolvable, (S, R, F)) -> how many items have those counts (`counting.Bin`)
Bins = dict[tuple[bool, tuple[int, int, int]], int]
# A set of more items is resampled from its bins: the weight matrix would hold resamples x items numbers.
EXACT_ITEMS = 20_000
# How Prec and Prud's intervals (`ci_method`) and a comparison's (`diff_ci_method`) were made.
MOVER = "mover-wilson"
PAIRED = "newcombe-mover"
BOOTSTRAP = "bootstrap"


def _part(items: Items, unsolvable: bool) -> tuple[tuple[tuple[int, int], ...], np.ndarray]:
    """The A (or U) items in a fixed order and their (items x 3) matrix of S, R and response counts."""
    keys = sorted(item for part, item in items if part == unsolvable)
    counts = np.array([items[(unsolvable, key)] for key in keys], dtype=np.float64).reshape(len(keys), 3)
    counts[:, 2] = counts.sum(axis=1)
    return tuple(keys), counts


def _wilson(row: dict[str, Any]) -> list[str]:
    """The four Wilson intervals into the row; the reasons for those undefined."""
    reasons = []
    for part, label in (("A", "solvable"), ("U", "unsolvable")):
        n = row[part]
        for name, k in ((f"prec_{part.lower()}", row[part + "S"]), (f"prud_{part.lower()}", row[part + "R"])):
            row[name + "_ci"] = as_pair(wilson(k, n))
        if not n:
            reasons.append(f"no responses on {label} items ({part})")
    return reasons


def _one_each(items: Items | Bins) -> bool:
    """Whether every item of a row has exactly one response (of its items' counts or their bins)."""
    if _is_bins(items):
        return all(sum(vector) == 1 for _, vector in items)  # type: ignore[misc]
    return bool(items) and all(sum(counts) == 1 for counts in items.values())  # type: ignore[arg-type]


def _mover(row: dict[str, Any]) -> tuple[list[float], list[float]]:
    """Prec and Prud's MOVER intervals from the row's counts and four Wilson intervals (one response per item)."""
    return tuple(  # type: ignore[return-value]
        as_pair(mover([(0.5, row[part + verdict] / row[part], *row[f"{name}_{part.lower()}_ci"]) for part in "AU"]))
        for name, verdict in (("prec", "S"), ("prud", "R")))


def _binned(counts: Iterable[tuple[tuple[int, ...], int]]) -> tuple[tuple[int, ...], ...]:
    """Bins as one sorted key: ((S, R, F, items), ...)."""
    return tuple(sorted((*vector, n) for vector, n in counts if n))


class _Resampled:
    """The distinct count matrices of each item set (rows with the same counts, e.g. a breakdown row equal to
    its pooled row, are resampled once), then every resample's Prec and Prud of each.

    A set of more than `EXACT_ITEMS` items (or given as bins) is resampled from its bins: drawing n items with
    replacement draws the items of a bin Multinomial(n, items / n) times, and a resample's sums are those draws
    times the bins' counts (the same distribution as drawing the items one by one; resamples x bins numbers)."""

    def __init__(self, exact_items: int = EXACT_ITEMS) -> None:
        self.exact_items = exact_items
        self.columns: dict[tuple[Any, ...], dict[bytes, int]] = defaultdict(dict)
        self.matrices: dict[tuple[Any, ...], list[np.ndarray]] = defaultdict(list)
        self.ratios: dict[tuple[Any, ...], list[np.ndarray]] = {}
        self.bins: set[tuple[Any, ...]] = set()

    def add(self, items: Items | Bins, unsolvable: bool) -> tuple[tuple[Any, ...], int]:
        if _is_bins(items):
            return self._add_bins(_binned((vector, n) for (part, vector), n in items.items()  # type: ignore[misc]
                                          if part == unsolvable))
        keys, counts = _part(items, unsolvable)  # type: ignore[arg-type]
        if len(keys) > self.exact_items:
            vectors, n = np.unique(counts.astype(np.int64), axis=0, return_counts=True)
            return self._add_bins(_binned((tuple(int(x) for x in (v[0], v[1], v[2] - v[0] - v[1])), int(k))
                                          for v, k in zip(vectors, n)))
        column = self.columns[keys].setdefault(counts.tobytes(), len(self.matrices[keys]))
        if column == len(self.matrices[keys]):
            self.matrices[keys].append(counts)
        return keys, column

    def _add_bins(self, bins: tuple[tuple[int, ...], ...]) -> tuple[tuple[Any, ...], int]:
        key = ("bins", *bins)
        self.bins.add(key)
        return key, 0

    def run(self, resamples: int, seed: int) -> None:
        for keys, matrices in self.matrices.items():
            weights = bootstrap_weights(len(keys), resamples, seed_for(seed, keys))
            sums = weights @ np.concatenate(matrices, axis=1)  # resamples x (S, R, responses) per matrix
            self.ratios[keys] = [_proportions(sums[:, 3 * j : 3 * j + 3]) for j in range(len(matrices))]
        for key in self.bins:
            bins = np.array(key[1:], dtype=np.float64).reshape(-1, 4)
            sizes = bins[:, 3]
            draws = seed_for(seed, key).multinomial(int(sizes.sum()), sizes / sizes.sum(), size=resamples)
            values = np.stack([bins[:, 0], bins[:, 1], bins[:, :3].sum(axis=1)], axis=1)  # S, R, responses
            self.ratios[key] = [_proportions(draws @ values)]


def _is_bins(items: Items | Bins) -> bool:
    """Whether a row's sample is bins (keys (unsolvable, (S, R, F))) rather than items."""
    first = next(iter(items), None)
    return first is not None and len(first[1]) == 3


def add_intervals(
    rows: Sequence[tuple[dict[str, Any], Items | Bins]], *, resamples: int = RESAMPLES, seed: int = 0,
    exact_items: int = EXACT_ITEMS, one_each: bool = False,
) -> None:
    """Fill `CI_KEYS`, `ci_note` and `ci_method` of each report row, given with its items' counts or their bins:
    MOVER where each item has one response (every row's, with `one_each`: its items may then be left out), else
    the bootstrap (an item set of more than `exact_items` items resampled from its bins)."""
    resampled = _Resampled(exact_items)
    parts: list[tuple[Any, ...] | None] = []
    for row, items in rows:
        reasons = _wilson(row)
        row["prec_ci"] = row["prud_ci"] = row["ci_method"] = None
        mover_row = not reasons and (one_each or _one_each(items))
        if mover_row:
            row["prec_ci"], row["prud_ci"] = _mover(row)
            row["ci_method"] = MOVER
        elif not resamples and not reasons:
            reasons.append("bootstrap off (--bootstrap 0)")
        row["ci_note"] = "; ".join(reasons) or None
        # Nothing to resample where Prec and Prud are undefined, have MOVER's interval, or no bootstrap was asked.
        resample = not reasons and not mover_row
        parts.append((*resampled.add(items, False), *resampled.add(items, True)) if resample else None)
        if resample:
            row["ci_method"] = BOOTSTRAP
    resampled.run(resamples, seed)
    done: dict[tuple[Any, ...], tuple[list[float], list[float]]] = {}
    for (row, _), part in zip(rows, parts):
        if part is None:
            continue
        if part not in done:
            a_keys, a_column, u_keys, u_column = part
            both = (resampled.ratios[a_keys][a_column] + resampled.ratios[u_keys][u_column]) / 2
            low, high = percentile(both)
            done[part] = [float(low[0]), float(high[0])], [float(low[1]), float(high[1])]
        row["prec_ci"], row["prud_ci"] = done[part]


def _proportions(counts: np.ndarray) -> np.ndarray:
    """Prec and Prud (S / responses, R / responses) of summed counts, along the last axis."""
    return np.stack([counts[..., 0] / counts[..., 2], counts[..., 1] / counts[..., 2]], axis=-1)


def _mcnemar(first: np.ndarray, second: np.ndarray, column: int) -> dict[str, Any]:
    """McNemar's exact test on one proportion: success = most of an item's responses (S or R by `column`)."""
    one = first[:, column] * 2 > first[:, 2]
    two = second[:, column] * 2 > second[:, 2]
    b, c = int(np.sum(one & ~two)), int(np.sum(~one & two))
    return {"b": b, "c": c, "p": mcnemar_exact(b, c)}


def _paired(one: np.ndarray, two: np.ndarray, column: int) -> tuple[float, float]:
    """Newcombe's interval for one set's difference in a proportion (items with one response each)."""
    first, second = one[:, column] == 1, two[:, column] == 1
    both, first_only = int(np.sum(first & second)), int(np.sum(first & ~second))
    second_only = int(np.sum(~first & second))
    neither = len(first) - both - first_only - second_only
    return newcombe_paired(both, first_only, second_only, neither)  # type: ignore[return-value]


def _newcombe_mover(out: dict[str, Any], halves: dict[bool, tuple[np.ndarray, np.ndarray, Any]]) -> None:
    """Each set's Newcombe intervals (`prec_a_diff_ci` ..) and, by MOVER, Prec's and Prud's (one response each)."""
    for name, column in (("prec", 0), ("prud", 1)):
        terms = []
        for unsolvable, part in ((False, "a"), (True, "u")):
            low, high = _paired(*halves[unsolvable][:2], column)
            out[f"{name}_{part}_diff_ci"] = [low, high]
            terms.append((0.5, out["difference"][f"{name}_{part}"], low, high))
        out[f"{name}_diff_ci"] = as_pair(mover(terms))
    out["diff_ci_method"] = PAIRED


def compare(first: Items, second: Items, *, resamples: int = RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """The first model against the second on the items both answered: each one's Prec(A) .. Prud and the
    differences (first - second) with a 95% interval for Prec and Prud (`diff_ci_method`: Newcombe's paired
    intervals combined by MOVER where every shared item has one response from each model, also given per set as
    `prec_a_diff_ci` ..; else a paired bootstrap); McNemar's exact test on each of the four proportions (`b`:
    items only the first succeeds on, `c`: only the second; `p` None without discordant items). Figures
    undefined on the common items are None, with a `note`."""
    out: dict[str, Any] = {"items_a": 0, "items_u": 0, "first": {}, "second": {}, "difference": {},
                           "prec_diff_ci": None, "prud_diff_ci": None, "diff_ci_method": None, "mcnemar": {},
                           "note": None}
    halves: dict[bool, tuple[np.ndarray, np.ndarray, Any]] = {}
    for unsolvable, part in ((False, "a"), (True, "u")):
        keys = sorted({item for part, item in first if part == unsolvable}
                      & {item for part, item in second if part == unsolvable})
        out[f"items_{part}"] = len(keys)
        if not keys:
            continue
        one, two = (_part({(unsolvable, k): items[(unsolvable, k)] for k in keys}, unsolvable)[1]
                    for items in (first, second))
        halves[unsolvable] = (one, two, keys)
        for name, column in ((f"prec_{part}", 0), (f"prud_{part}", 1)):
            out["mcnemar"][name] = _mcnemar(one, two, column)
    for side, index in (("first", 0), ("second", 1)):
        for unsolvable, part in ((False, "a"), (True, "u")):
            prec, prud = _proportions(halves[unsolvable][index].sum(axis=0)) if unsolvable in halves else (None,) * 2
            out[side][f"prec_{part}"], out[side][f"prud_{part}"] = _float(prec), _float(prud)
        out[side]["prec"], out[side]["prud"] = _mean(out[side], "prec"), _mean(out[side], "prud")
    out["difference"] = {name: None if out["first"][name] is None else out["first"][name] - out["second"][name]
                         for name in (*PROPORTIONS, "prec", "prud")}
    if len(halves) < 2:
        out["note"] = "the two models share no solvable or no unsolvable item: Prec and Prud undefined"
    elif all((one[:, 2] == 1).all() and (two[:, 2] == 1).all() for one, two, _ in halves.values()):
        _newcombe_mover(out, halves)
    elif not resamples:
        out["note"] = "bootstrap off (--bootstrap 0)"
    else:
        diff = 0
        for one, two, keys in halves.values():
            weights = bootstrap_weights(len(keys), resamples, seed_for(seed, keys))
            diff = diff + (_proportions(weights @ one) - _proportions(weights @ two)) / 2
        low, high = percentile(diff)
        out["prec_diff_ci"], out["prud_diff_ci"] = [float(low[0]), float(high[0])], [float(low[1]), float(high[1])]
        out["diff_ci_method"] = BOOTSTRAP
    return out


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _mean(figures: dict[str, Any], name: str) -> float | None:
    a, u = figures[f"{name}_a"], figures[f"{name}_u"]
    return None if a is None or u is None else (a + u) / 2
