"""Pairs whose parsed forms settle math-verify's verdict without running its `verify`: always "not equal".

math-verify (0.9, `grader.verify`) compares every parsed form of the gold with every parsed form of the answer;
each is a sympy object or the extracted string. This module names answers of two shapes and gold forms they can
never equal, from what `verify` does with them (`sympy_expr_eq` and the functions it calls):

- A *number* answer (an `Integer`, `Rational` or `Float`) against a *constant* gold (a real number expression with
  no free symbols and no percent sign): `verify` says equal only through structural equality, numeric equality
  rounded to 6 places (`sympy_numeric_eq`) or `simplify(gold - answer) == 0`, each of which needs the two values
  to agree to 6 decimals. A gold value farther than `_CLOSE` from the answer is therefore unequal; a closer one
  goes to `verify`. (A percent gold, `X * UnevaluatedExpr(1/100)`, compares its bare `X` with an integer answer:
  9% equals 9; such golds always go to `verify`.)
- A *monomial* answer (`c * x**k * y**m ...` with at least one symbol, not a bare symbol: what math-verify reads
  "I don't know" or "it's unsolvable" as) against a constant gold: never structurally equal, never numerically
  equal (rounding a free symbol fails and the comparison says no), and `gold - answer` is never zero, since a
  monomial in a symbol is not constant. A bare symbol is left to `verify` (it equates a symbol `e` with E).
  A set or tuple of monomials ("Sorry, I don't know" reads as one) is compared element by element or as a set,
  and no element is constant.
- A number or a monomial against a gold *collection* of constants (a `FiniteSet` or `Tuple` of length >= 2, a
  non-degenerate `Interval`, a `Union` of them): `sympy_compare_sets` wraps the answer as a one-element set,
  which equals neither such a set nor a tuple of another length, and the interval branches need two elements.
- An answer math-verify could only read as text (its sympy parse failed) against a gold whose text differs:
  `verify` compares text only with text.

Anything else (relations, a bare symbol, an expression that is not a monomial, a gold with free symbols, strings
that coincide) goes to `verify`. `tests/transcripts/test_unequal_forms.py` checks every pair this settles against
`verify` itself, on generated pairs and on every ground truth of the shared data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sympy import (
    Expr,
    FiniteSet,
    Float,
    Integer,
    Interval,
    Mul,
    Number,
    NumberSymbol,
    Pow,
    Rational,
    Symbol,
    Tuple,
    UnevaluatedExpr,
    Union,
)
from sympy.core.numbers import ImaginaryUnit

_CLOSE = Float("1e-3")  # relative (and, below 1, absolute): far wider than math-verify's 6 decimals
_PRECISION = 30  # digits of a constant gold's value


def unequal(gold: Sequence[Any], answer: Sequence[Any]) -> bool:
    """True when math-verify's `verify(gold, answer)` is surely False, from the parsed forms alone.

    Args:
        gold: math-verify's `parse` of the ground truth (non-empty).
        answer: math-verify's `parse` of the final answer (non-empty).
    """
    gold_texts = {form.strip() for form in gold if isinstance(form, str)}
    if any(isinstance(form, str) and form.strip() in gold_texts for form in answer):
        return False
    answers = [form for form in answer if not isinstance(form, str)]
    golds = [form for form in gold if not isinstance(form, str)]
    if not answers:  # only text, unlike the gold's: `verify` never compares text with sympy
        return True
    if not all(_constant(form) is not None or _collection(form) for form in golds):
        return False
    for form in answers:
        if _never_constant(form):
            continue  # unequal to every constant and every collection of constants
        number = _number(form)
        if number is None or not all(_collection(g) or _far(_constant(g), number) for g in golds):
            return False
    return True


def _number(form: Any) -> Float | None:
    if isinstance(form, (Integer, Rational, Float)):
        return Float(form, _PRECISION)
    return None


def _monomial(form: Any) -> bool:
    """c * x**k * ... with a symbol in it, not a bare symbol: never a constant."""
    if not isinstance(form, Mul) or not form.free_symbols:
        return False
    return all(
        isinstance(factor, (Symbol, Number, NumberSymbol, ImaginaryUnit))
        or isinstance(factor, Pow)
        and isinstance(factor.base, Symbol)
        and isinstance(factor.exp, Integer)
        and factor.exp > 0
        for factor in form.args
    )


def _never_constant(form: Any) -> bool:
    """A monomial, or a set or tuple of monomials (what math-verify reads "Sorry, I don't know" as)."""
    if isinstance(form, (FiniteSet, Tuple)):
        return len(form) > 0 and all(_monomial(element) for element in form)
    return _monomial(form)


def _collection(form: Any) -> bool:
    """A gold form of constants that no one-element set equals."""
    if not isinstance(form, (FiniteSet, Tuple, Interval, Union)) or form.free_symbols:
        return False
    if isinstance(form, (FiniteSet, Tuple)):
        return len(form) >= 2
    if isinstance(form, Interval):
        return bool(form.start != form.end)
    return all(isinstance(part, Interval) and part.start != part.end for part in form.args)


def _far(value: Float | None, number: Float) -> bool:
    return value is not None and abs(value - number) > _CLOSE * max(1, abs(number))


def _constant(form: Any) -> Float | None:
    """The real value of a constant gold expression without a percent; None for anything else."""
    if not isinstance(form, Expr) or form.free_symbols or form.has(UnevaluatedExpr):
        return None
    try:
        value = form.evalf(_PRECISION)
    except Exception:  # noqa: BLE001 - sympy raises many kinds; then math-verify decides
        return None
    return value if isinstance(value, Float) and value.is_finite else None
