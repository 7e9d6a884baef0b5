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
- Against a gold *expression with free symbols* (not a bare symbol, relation, set, matrix or percent):
  - a set or tuple of two or more monomials whose symbol parts differ ("Sorry, I don't know"): `verify` goes to
    `sympy_compare_sets`, which wraps the gold as a one-element set; that is never structurally equal to it, the
    element-wise comparison needs equal lengths, and the symmetric difference is never provably empty (two
    different monomials are different functions, so no single gold equals both). A bare symbol gold too.
  - a monomial with a symbol the gold does not have (and a coefficient of size >= `_CLOSE`): not structurally
    equal; `(gold - answer).evalf(chop=True)` keeps the answer's term, so is not 0; `simplify(gold - answer)`
    is not zero, as the difference changes with that symbol. (A bare symbol gold is left to `verify`: it
    compares a symbol with the answer's letters joined.)
  - a number, when the gold is built from arithmetic and elementary functions of its symbols only and takes two
    clearly different values (30 digits) at two points: then it is not a constant function, so no rounding of
    it works (rounding a symbolic expression raises), `doit()` leaves it non-constant, so unequal to a number,
    and `simplify(gold - number)` is not zero. (sin(x)^2 + cos(x)^2 takes one value: left to `verify`.)

Anything else (relations, a bare symbol answer, an expression that is not a monomial, strings that coincide)
goes to `verify`. `tests/transcripts/judge/test_unequal_forms.py` checks every pair this settles against
`verify` itself, on generated pairs and on every ground truth of the shared data.
"""

from __future__ import annotations

import cmath
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from sympy import (
    Add,
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
    exp,
    log,
    preorder_traversal,
)
from sympy.core.numbers import ImaginaryUnit
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.trigonometric import InverseTrigonometricFunction, TrigonometricFunction
from sympy.matrices.expressions import MatrixExpr

_T = TypeVar("_T")


def _by_form(function: Callable[[Any], _T]) -> Callable[[Any], _T]:
    """`function` cached by the parsed form (a gold is compared with many answers, an answer with many golds;
    sympy's `==` is structural, so equal keys are the same expression); unhashable forms (matrices) uncached."""
    cached = lru_cache(maxsize=4096)(function)

    def wrapper(form: Any) -> _T:
        try:
            return cached(form)
        except TypeError:  # unhashable
            return function(form)

    return wrapper


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
    # Only text, unlike the gold's: `verify` never compares text with sympy. Otherwise every sympy pair.
    return all(_forms_unequal(g, form) for form in answers for g in golds)


def _forms_unequal(gold: Any, answer: Any) -> bool:
    """Whether `verify` surely finds this gold form and this answer form unequal."""
    if _constant(gold) is not None or _collection(gold):
        if _never_constant(answer):
            return True  # unequal to every constant and every collection of constants
        number = _number(answer)
        return number is not None and (_collection(gold) or _far(_constant(gold), number))
    if not _symbolic(gold):
        return False
    if _monomials(answer):
        return True
    if isinstance(gold, Symbol):
        return False
    if _number(answer) is not None:
        return _varies(gold)
    return _monomial(answer) and bool(answer.free_symbols - gold.free_symbols)


def _number(form: Any) -> Float | None:
    if isinstance(form, (Integer, Rational, Float)):
        return Float(form, _PRECISION)
    return None


def _monomial(form: Any) -> bool:
    """c * x**k * ... with a symbol in it, not a bare symbol: never a constant."""
    if not isinstance(form, Mul) or not form.free_symbols:
        return False
    coefficient = Mul(*(factor for factor in form.args if not factor.free_symbols))
    size = abs(complex(coefficient))
    if not size >= float(_CLOSE):  # `verify`'s `evalf(chop=True)` must not drop the term; NaN is no coefficient
        return False
    return all(
        isinstance(factor, (Symbol, Number, NumberSymbol, ImaginaryUnit))
        or isinstance(factor, Pow)
        and isinstance(factor.base, Symbol)
        and isinstance(factor.exp, Integer)
        and factor.exp > 0
        for factor in form.args
    )


@_by_form
def _symbolic(form: Any) -> bool:
    """A gold expression with a free symbol: not a relation, set, matrix or percent."""
    return (isinstance(form, Expr) and not isinstance(form, MatrixExpr) and bool(form.free_symbols)
            and not form.has(UnevaluatedExpr))


_FUNCTION_TREE = (Add, Mul, Pow, Symbol, Number, NumberSymbol, ImaginaryUnit, exp, log, TrigonometricFunction,
                  InverseTrigonometricFunction, HyperbolicFunction)


@_by_form
def _varies(form: Any) -> bool:
    """Whether a gold made only of arithmetic and elementary functions of its symbols takes two clearly different
    values at two points (so it is not a constant function, and no number equals it)."""
    if not all(isinstance(node, _FUNCTION_TREE) for node in preorder_traversal(form)):
        return False
    symbols = sorted(form.free_symbols, key=str)
    values = []
    for shift in (0, 1):
        point = {symbol: Rational(2 + 3 * index + shift, 7 + index) for index, symbol in enumerate(symbols)}
        try:
            value = form.subs(point).evalf(_PRECISION)
            values.append(complex(value))
        except Exception:  # noqa: BLE001 - not a finite number there: then math-verify decides
            return False
    if not all(cmath.isfinite(value) for value in values):
        return False
    return abs(values[0] - values[1]) > _CLOSE * max(1, abs(values[0]), abs(values[1]))


@_by_form
def _monomials(form: Any) -> bool:
    """A set or tuple of two or more monomials whose symbols differ ("Sorry, I don't know"): no two are the same
    function, so no one-element set equals it."""
    if not isinstance(form, (FiniteSet, Tuple)) or len(form) < 2 or not all(_monomial(e) for e in form):
        return False
    parts = [Mul(*(f for f in element.args if f.free_symbols)) for element in form]
    return len(set(parts)) == len(parts)


@_by_form
def _never_constant(form: Any) -> bool:
    """A monomial, or a set or tuple of monomials (what math-verify reads "Sorry, I don't know" as)."""
    if isinstance(form, (FiniteSet, Tuple)):
        return len(form) > 0 and all(_monomial(element) for element in form)
    return _monomial(form)


@_by_form
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


@_by_form
def _constant(form: Any) -> Float | None:
    """The real value of a constant gold expression without a percent; None for anything else."""
    if not isinstance(form, Expr) or form.free_symbols or form.has(UnevaluatedExpr):
        return None
    try:
        value = form.evalf(_PRECISION)
    except Exception:  # noqa: BLE001 - sympy raises many kinds; then math-verify decides
        return None
    return value if isinstance(value, Float) and value.is_finite else None
