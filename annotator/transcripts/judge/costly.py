"""Answers too costly to evaluate, decided from the text or the parsed form before math-verify evaluates them.

math-verify's `verify` calls sympy's `doit`, which computes every exact power, factorial and binomial: the number
`9^{9^{9}}` has 369 million digits, `10^{10^{10}}` ten billion, and computing them is one long call into C that no
time limit in the process can interrupt. So before `verify` runs:

- a text longer than `MAX_TEXT` characters or nested deeper than `MAX_DEPTH` is not parsed (the parser's time
  grows with both; a short ground truth is neither);
- `digits` estimates, from the parsed form alone, how many digits each exact number sympy would compute has (a
  power: the base's digits times the exponent's value; a factorial, a binomial); a form with a part of more than
  `MAX_DIGITS` digits is *huge* (computing a number of a million digits is quick, but `verify` then simplifies
  its difference with a symbolic gold, which with tens of thousands of digits runs for minutes in C);
- a product over more than `MAX_TERMS` values of its index counts as huge too;
- a huge answer that is a plain number (integers, powers of integers, factorials, their products: `huge_number`)
  has far more digits than any gold that is not huge, so it equals none of them and is dropped from the answer's
  forms; any other huge form (`10^{10^{10}} - 10^{10^{10}}`, a huge gold) leaves the pair undecided (None), as a
  pair out of time is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sympy import Add, Integer, Mul, Pow, Product, Rational, binomial, factorial

MAX_TEXT = 20_000  # characters of a text that is parsed
MAX_DEPTH = 100  # nesting of braces, brackets and parentheses in a text that is parsed
MAX_DIGITS = 1000.0  # digits of an exact number sympy may compute and then simplify with a symbolic gold
MAX_TERMS = 10_000  # values of a product's index
_OPENING, _CLOSING = frozenset("{[("), frozenset("}])")


def too_long(text: str) -> bool:
    """Whether a text is too long or too deeply nested to parse."""
    if len(text) > MAX_TEXT:
        return True
    depth = 0
    for char in text:
        if char in _OPENING:
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif char in _CLOSING:
            depth -= 1
    return False


def _power_of_ten(size: float) -> float:
    """10 ** size as a float, inf past the float range."""
    try:
        return math.pow(10.0, size)
    except OverflowError:
        return math.inf


def _log10(value: int) -> float:
    return math.log10(abs(int(value))) if value else 0.0  # exact enough for integers of any size


def digits(form: Any) -> float | None:
    """An upper estimate of log10 |value| of the exact number `form` evaluates to (None: not an exact number of
    the shapes sympy computes eagerly: integers, rationals, their powers, products, sums, factorials, binomials)."""
    if isinstance(form, Integer | Rational):
        return max(_log10(form.p), _log10(form.q))
    if not isinstance(form, Add | Mul | Pow | factorial | binomial):
        return None
    sizes = [digits(arg) for arg in form.args]
    if any(size is None for size in sizes):
        return None
    if isinstance(form, Pow):
        base, exponent = sizes
        return 0.0 if base == 0 else base * _power_of_ten(exponent)  # type: ignore[operator]
    if isinstance(form, Mul):
        return sum(sizes)  # type: ignore[arg-type]
    if isinstance(form, Add):
        return max(sizes) + math.log10(len(sizes))  # type: ignore[type-var, operator]
    count = _power_of_ten(sizes[0])  # type: ignore[arg-type]
    return count * max(math.log10(max(count, 1.0)), 1.0)  # n! < n^n, binomial(n, k) < 2^n


def _long_product(form: Any) -> bool:
    """A product over more than `MAX_TERMS` values of its index (exact limits): sympy multiplies them one by one."""
    if not isinstance(form, Product):
        return False
    for _, low, high in form.limits:
        sizes = (digits(low), digits(high))
        if None not in sizes and max(sizes) > math.log10(MAX_TERMS):  # type: ignore[type-var]
            return True
    return False


def huge(form: Any) -> bool:
    """Whether any part of `form` is an exact number of more than `MAX_DIGITS` digits, or a long product."""
    if _long_product(form):
        return True
    if not hasattr(form, "args"):
        return False
    size = digits(form)
    if size is not None:
        return size > MAX_DIGITS
    return any(huge(arg) for arg in form.args)


def _least_digits(form: Any) -> float | None:
    """A lower estimate of log10 |value| for a plain number: a non-zero integer, a power of an integer other
    than 0 and ±1 to a positive plain number, a factorial of one, a product of them; None for anything else."""
    if isinstance(form, Integer):
        return None if form == 0 else _log10(form.p)
    if isinstance(form, Pow):
        base, exponent = _least_digits(form.base), _least_digits(form.exp)
        if base is None or exponent is None or base < 0.3 or form.exp.is_negative:
            return None
        return base * _power_of_ten(exponent)
    if isinstance(form, factorial):
        size = _least_digits(form.args[0])
        if size is None or form.args[0].is_negative:
            return None
        count = _power_of_ten(size)
        return count * (math.log10(count) - math.log10(math.e)) if count > 3 else 0.0  # n! >= (n/e)^n
    if isinstance(form, Mul):
        sizes = [_least_digits(arg) for arg in form.args]
        return None if any(size is None for size in sizes) else sum(sizes)  # type: ignore[arg-type]
    return None


def huge_number(form: Any) -> bool:
    """Whether `form` is a plain number of surely more than `MAX_DIGITS` digits."""
    size = _least_digits(form)
    return size is not None and size > MAX_DIGITS


def affordable(gold: Sequence[Any], answer: Sequence[Any]) -> list[Any] | None:
    """The answer's parsed forms that `verify` can afford to compare with the gold's, huge plain numbers dropped
    (they equal no gold that is not huge); None when the pair cannot be compared at an affordable cost (a huge
    gold form, or a huge answer form that is not a plain number)."""
    if any(huge(form) for form in gold):
        return None
    kept = [form for form in answer if not huge_number(form)]
    if any(huge(form) for form in kept):
        return None
    return kept
