"""TreeCut themes: the item names and places a problem's variables are named after."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    """Item names of a theme: (singular, plural, other plural spellings seen in the wild) and places."""

    name: str
    items: tuple[tuple[str, str, tuple[str, ...]], ...]
    places: tuple[str, ...]
    article: str = "a"


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
    )
}


@dataclass(frozen=True)
class Name:
    """One variable's name: its singular and plural phrase, e.g. "burger at Texas BBQ"."""

    singular: str
    plural: str


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


def get_theme(name: str) -> Theme:
    try:
        return THEMES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r}; choose one of {', '.join(THEMES)}") from None
