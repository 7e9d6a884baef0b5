"""What every agreement coefficient reads: labels as a raters x items matrix, and what a coefficient gives back.

A coefficient is a module of `annotator/figures/agreement/` declaring `COEFFICIENT = Coefficient(...)`, listed once in
`annotator/figures/agreement/registry.py`. A value that is undefined for the data (one category only, no item with two
raters) is None with the reason why: never NaN, never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

MISSING = -1
ONE_VALUE = "only one label value occurs"
NO_PAIRS = "no item has labels from two or more annotators"


@dataclass(frozen=True)
class Ratings:
    """Labels as a raters x items matrix (`MISSING` where a rater gave none)."""

    raters: tuple[str, ...]
    items: Sequence[Hashable]  # a tuple, or an array of numbers (a big project's millions of candidate ids)
    matrix: np.ndarray  # int8, shape (len(raters), len(items))
    categories: tuple[int, ...] = (0, 1)

    @classmethod
    def from_triples(
        cls, triples: Iterable[tuple[Hashable, str, int]], *, categories: Sequence[int] = (0, 1)
    ) -> Ratings:
        """From (item, rater, label) triples; a rater's second label on one item replaces the first."""
        columns = tuple(zip(*triples)) or ((), (), ())
        return cls.from_columns(*columns, categories=categories)

    @classmethod
    def from_columns(
        cls, items: Sequence[Hashable], raters: Sequence[str], labels: Sequence[int], *,
        categories: Sequence[int] = (0, 1),
    ) -> Ratings:
        """From three parallel columns (hash-based, in first-appearance order: fast for 100,000s of labels)."""
        import pandas as pd

        item_codes, item_keys = pd.factorize(_column(items))
        rater_codes, rater_keys = pd.factorize(_column(raters))
        matrix = np.full((len(rater_keys), len(item_keys)), MISSING, dtype=np.int8)
        matrix[rater_codes, item_codes] = np.asarray(labels, dtype=np.int8)
        # Raters as Python values (`tolist`), whatever the column's dtype; numeric items stay an array.
        return cls(tuple(rater_keys.tolist()), _keys(item_keys), matrix, tuple(categories))

    @cached_property
    def counts(self) -> np.ndarray:
        """items x categories: how many raters gave each category to each item (computed once; every
        coefficient reads it)."""
        return np.stack([(self.matrix == k).sum(axis=0) for k in self.categories], axis=1)


def _column(values: Sequence[Hashable]) -> Any:
    """A column to factorize: integers as integers (hashed in C, far faster than objects) and a categorical as its
    codes, the rest as objects."""
    import pandas as pd

    column = pd.Series(values)
    return column if column.dtype.kind in "iu" or isinstance(column.dtype, pd.CategoricalDtype) \
        else column.astype(object)


def _keys(keys: Any) -> Sequence[Hashable]:
    """Factorized keys: numbers as an array (no Python object each), the rest as a tuple of Python values."""
    values = np.asarray(keys)
    return values if values.dtype.kind in "iuf" else tuple(keys.tolist())


@dataclass(frozen=True)
class Result:
    """A coefficient's value, or None and `reason`; `extra` are more keys for the report (e.g. Fleiss' number of
    raters)."""

    value: float | None
    reason: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def defined(value: float | None, reason: str) -> Result:
    """`value`, or None with `reason` when it is None."""
    return Result(value, None if value is not None else reason)


def _no_note(block: Mapping[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class Coefficient:
    """One agreement coefficient over all raters and items.

    `key` is its key in `agreement`'s report (and its JSON), `label` its name on the Team page and in the CLI,
    `citation` where its definition comes from (the page's help). `note(block)` says, from a report block,
    over what the value was computed when that is not every item (e.g. "over the items with 3 labels").
    """

    key: str
    label: str
    citation: str
    compute: Callable[[Ratings], Result]
    note: Callable[[Mapping[str, Any]], str | None] = _no_note
