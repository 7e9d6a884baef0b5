"""TreeCut rendering: one linear formula as a sentence of the Appendix A templates."""

from __future__ import annotations

import random

from annotator.treecut.themes import Name

ROOT = -1  # the tree's root: an edge from it is a given price


def _quantity(n: int, name: Name, article: str) -> str:
    return f"{article} {name.singular}" if n == 1 else f"{n} {name.plural}"


def _verb(n: int) -> str:
    return "costs" if n == 1 else "cost"


# amount, capital and clause are shared with generate (proofs) and parse (articles): package-internal helpers.


def amount(c: int) -> str:
    """`1` -> "a dollar", `12` -> "12 dollars"."""
    return "a dollar" if c == 1 else f"{c} dollars"


def capital(text: str) -> str:
    """The text with its first letter upper-cased (the rest untouched, unlike `str.capitalize`)."""
    return text[0].upper() + text[1:]


def clause(sentence: str) -> str:
    """A sentence as a clause: first letter lower-cased, final period dropped."""
    return sentence[0].lower() + sentence[1:-1]


def render_formula(
    a: int, i: int, b: int, j: int, rhs: int, names: list[Name], rng: random.Random, article: str = "a"
) -> str:
    """The sentence of `a*x_i + b*x_j = rhs` (j = ROOT for a given price `a*x_i = rhs`), Appendix A templates."""
    if j == ROOT:
        return capital(f"{_quantity(a, names[i], article)} {_verb(a)} {amount(rhs)}.")
    if a < 0 and b < 0:
        a, b, rhs = -a, -b, -rhs
    if a > 0 and b > 0:
        return capital(f"{_quantity(a, names[i], article)} and {_quantity(b, names[j], article)} cost {amount(rhs)}.")
    # p*x_pos - q*x_neg = rhs with p, q > 0
    if a > 0:
        p, pos, q, neg = a, i, -b, j
    else:
        p, pos, q, neg = b, j, -a, i
    more, less = _quantity(p, names[pos], article), _quantity(q, names[neg], article)
    if rhs == 0:
        if rng.random() < 0.5:
            more, less = less, more
        return f"The price of {more} is the same as that of {less}."
    if rhs < 0:
        # q*x_neg costs |rhs| more than p*x_pos
        more, less, p, q, rhs = less, more, q, p, -rhs
    if rng.random() < 0.5:
        return capital(f"{more} {_verb(p)} {amount(rhs)} more than {less}.")
    return capital(f"{less} {_verb(q)} {amount(rhs)} less than {more}.")
