"""TreeCut themes: the item names, places and prices a problem's variables are made of.

Composite names follow the reference generator (and the paper's Appendix C examples): a problem uses two
places and ceil(numVars/2) items, every item sold at both, so that names collide on purpose ("a burger at
Texas BBQ" vs "a burger at Mike's Place"), the compositeName effect of the paper's Section 4.3 (Fig. 2).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

VOWELS = "aeiouAEIOU"


@dataclass(frozen=True)
class Theme:
    """Item names of a theme: (singular, plural, other plural spellings seen in the wild), places, and the
    prices a variable may take (`prices`, drawn uniformly)."""

    name: str
    items: tuple[tuple[str, str, tuple[str, ...]], ...]
    places: tuple[str, ...]
    prices: tuple[int, ...]


THEMES: dict[str, Theme] = {
    "food": Theme(
        name="food",
        items=(
            ("BLT sandwich", "BLT sandwiches", ()),
            ("Caesar salad", "Caesar salads", ()),
            ("Cobb salad", "Cobb salads", ()),
            ("Greek salad", "Greek salads", ()),
            ("burger", "burgers", ()),
            # The reference generator writes "cream brulees"; accept it when reading.
            ("creme brulee", "creme brulees", ("cream brulees",)),
            ("fruit tart", "fruit tarts", ()),
            ("grilled cheese sandwich", "grilled cheese sandwiches", ()),
            ("lasagna", "lasagnas", ()),
            ("piece of cheese cake", "pieces of cheese cake", ()),
            ("piece of fried chicken", "pieces of fried chicken", ()),
            ("pie", "pies", ()),
            ("pizza", "pizzas", ()),
            ("scrambled egg", "scrambled eggs", ()),
        ),
        places=("Bistro Nice", "Taste Good Cuisine", "Mike's Place", "Texas BBQ", "Urban Plate"),
        prices=tuple(range(5, 16)),  # Appendix A: prices in [5, 15]
    ),
    # The reference's outfit theme: prices 50-100 in steps of 5, "an" before a vowel.
    "outfit": Theme(
        name="outfit",
        items=(
            ("T-shirt", "T-shirts", ()),
            ("belt", "belts", ()),
            ("blazer", "blazers", ()),
            ("dress", "dresses", ()),
            ("evening gown", "evening gowns", ()),
            ("hat", "hats", ()),
            ("hoodie", "hoodies", ()),
            ("jacket", "jackets", ()),
            ("overcoat", "overcoats", ()),
            ("pair of jeans", "pairs of jeans", ()),
            ("pair of shoes", "pairs of shoes", ()),
            ("scarf", "scarves", ()),
            ("skirt", "skirts", ()),
            ("sweater", "sweaters", ()),
            ("umbrella", "umbrellas", ()),
        ),
        places=("Fashion Hub", "Style Avenue", "Urban Threads", "Elegant Attire", "Trend Setters"),
        prices=tuple(range(50, 101, 5)),
    ),
}


@dataclass(frozen=True)
class Name:
    """One variable's name: its singular and plural phrase, e.g. "burger at Texas BBQ", and its article."""

    singular: str
    plural: str

    @property
    def article(self) -> str:
        return article_for(self.singular)


def article_for(singular: str) -> str:
    """ "an" before a vowel ("an overcoat"), else "a"."""
    return "an" if singular[:1] in VOWELS else "a"


def theme_names(theme: Theme, *, composite: bool) -> list[Name]:
    """Every variable name of a theme: each item, or each item at each place (composite); built once."""
    key = (theme.name, composite)
    names = _NAMES.get(key)
    if names is None:
        names = _NAMES[key] = _theme_names(theme, composite=composite)
    return names


_NAMES: dict[tuple[str, bool], list[Name]] = {}


def _theme_names(theme: Theme, *, composite: bool) -> list[Name]:
    if composite:
        return [Name(f"{s} at {place}", f"{p} at {place}") for s, p, _ in theme.items for place in theme.places]
    return [Name(s, p) for s, p, _ in theme.items]


def max_variables(theme: Theme, *, composite: bool) -> int:
    """The most variables a problem can name: every item, at both of its two places when composite."""
    return 2 * len(theme.items) if composite else len(theme.items)


def sample_names(theme: Theme, n: int, rng: random.Random, *, composite: bool) -> list[Name]:
    """`n` distinct names in random order. Composite: two places and ceil(n/2) items, every item at both
    places (the reference generator's construction); simple: `n` items."""
    rand = rng.random
    if not composite:
        return _pick(theme_names(theme, composite=False), n, rand)
    # theme_names lists item-major: the name of item i at place p is at i * len(places) + p.
    every, width = theme_names(theme, composite=True), len(theme.places)
    places = _pick(range(width), 2, rand)
    items = _pick(range(len(theme.items)), math.ceil(n / 2), rand)
    return _pick([every[i * width + p] for i in items for p in places], n, rand)


def _pick(population: Sequence[T], k: int, rand: Callable[[], float]) -> list[T]:
    """`k` distinct members in random order (a partial Fisher-Yates shuffle; `random.sample` costs several
    times more per draw, and generation draws three samples per problem)."""
    pool = list(population)
    for i in range(k):
        j = i + int(rand() * (len(pool) - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def get_theme(name: str) -> Theme:
    try:
        return THEMES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r}; choose one of {', '.join(THEMES)}") from None
