"""TreeCut rendering: one linear formula as a sentence of the Appendix A templates, worded like the reference
generator: the subject of a "more than" / "less than" sentence is the item with the positive coefficient."""

from __future__ import annotations

from annotator.construction.treecut.themes import Name

ROOT = -1  # the tree's root: an edge from it is a given price


def _quantity(n: int, name: Name) -> str:
    return f"{name.article} {name.singular}" if n == 1 else f"{n} {name.plural}"


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


def render_formula(a: int, i: int, b: int, j: int, rhs: int, names: list[Name]) -> str:
    """The sentence of `a*x_i + b*x_j = rhs` (j = ROOT for a given price `a*x_i = rhs`), Appendix A templates.

    The generator gives the sign patterns (+, +), (+, -) and (-, +); (-, -) is read as (+, +). With
    `p*x_pos - q*x_neg = rhs` the sentence is "pos costs rhs more than neg" for rhs > 0, "pos costs |rhs|
    less than neg" for rhs < 0, and "The price of pos is the same as that of neg" for rhs = 0.
    """
    if j == ROOT:
        return capital(f"{_quantity(a, names[i])} {_verb(a)} {amount(rhs)}.")
    if a < 0 and b < 0:
        a, b, rhs = -a, -b, -rhs
    if a > 0 and b > 0:
        return capital(f"{_quantity(a, names[i])} and {_quantity(b, names[j])} cost {amount(rhs)}.")
    p, pos, q, neg = (a, i, -b, j) if a > 0 else (b, j, -a, i)
    subject, other = _quantity(p, names[pos]), _quantity(q, names[neg])
    if rhs == 0:
        return f"The price of {subject} is the same as that of {other}."
    more_or_less = "more" if rhs > 0 else "less"
    return capital(f"{subject} {_verb(p)} {amount(abs(rhs))} {more_or_less} than {other}.")
