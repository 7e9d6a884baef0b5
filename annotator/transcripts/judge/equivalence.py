"""Is a final answer equivalent to the ground truth? math-verify decides, under our own time limit.

math-verify is called with its own timeouts off (`parse(..., parsing_timeout=None)`,
`verify(..., timeout_seconds=None)`): they use `signal.alarm`, which fails off the main thread. Our limit
(`deadline.time_limit`) holds on any thread. Gold first, as math-verify's `verify(gold, target)` expects.
Answers that are plainly equal or unequal (the same text; two plain numbers) skip math-verify, with exactly its
verdict; pairs whose parsed forms can never be equal skip its `verify` (`unequal_forms`); parses are cached,
since a model gives the same answer to many items and every item is answered by many models. A pair is
undecided (None, as one out of time) when it cannot be compared at an affordable cost (`costly`: exponent towers,
texts too long or too deeply nested to parse) or when sympy or math-verify raises on it: one odd answer never
fails the job. The limit interrupts Python code only; a judge worker also ends a pair stuck in one long C call
(`pair_workers`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from annotator.transcripts.judge.deadline import TimeLimit, time_limit

TIME_LIMIT_SECONDS = 5.0
_LOG = logging.getLogger(__name__)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def gold_texts(ground_truth: Any) -> list[str]:
    """The ground truth as answer texts: a list (Minerva) gives each element; a whole float (AMC's `142.0`)
    its integer; None nothing."""
    values = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    texts = []
    for value in values:
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        texts.append(str(value).strip())
    return [text for text in texts if text]


def _plain(text: str) -> str:
    # Only surrounding space: math-verify itself reads `42.` or `\\, m` unlike `42` or `m` (the fast paths'
    # tests compare them with math-verify on generated pairs and on every ground truth of the release).
    return text.strip()


def _plainly_equal(gold: str, answer: str) -> bool | None:
    """True or False when the texts settle it without math-verify, None when they do not."""
    a, b = _plain(gold), _plain(answer)
    if a == b:
        return True
    if _PLAIN_NUMBER.fullmatch(a) and _PLAIN_NUMBER.fullmatch(b):
        try:
            if Decimal(a) == Decimal(b):
                return True
        except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
            return None
        # Two different whole numbers are different answers; decimals may still round to the same value.
        if "." not in a and "." not in b:
            return False
    return None


@lru_cache(maxsize=1)
def _math_verify() -> Any:
    import math_verify

    # It warns once that its timeouts are off; ours (`time_limit`) is on.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    return math_verify


@lru_cache(maxsize=8192)
def _parsed(text: str) -> Any:
    return _math_verify().parse(f"\\boxed{{{text}}}", parsing_timeout=None)


@lru_cache(maxsize=65536)
def _verified(gold: str, answer: str, seconds: float | None) -> bool | None:
    """math-verify's verdict on one pair; None when it cannot be had within `seconds` or at an affordable cost,
    or when sympy or math-verify fails on it (that pair is undecided: the job goes on)."""
    from annotator.transcripts.judge.costly import too_long  # sympy: loaded with math-verify, not before

    if too_long(gold) or too_long(answer):
        return None
    warm_up()  # loading math-verify and its parser is not the pair's time
    try:
        with time_limit(seconds):
            return _compared(gold, answer)
    except TimeLimit:
        return None
    except Exception:  # noqa: BLE001 - sympy raises many kinds on odd input (NaN comparisons, huge numbers)
        _LOG.debug("math-verify failed on %r against %r", answer[:200], gold[:200], exc_info=True)
        return None


def _compared(gold: str, answer: str) -> bool | None:
    from annotator.transcripts.judge.costly import affordable
    from annotator.transcripts.judge.unequal_forms import unequal

    gold_parsed, answer_parsed = _parse(gold), _parse(answer)
    if not gold_parsed or not answer_parsed:
        return False
    kept = affordable(gold_parsed, answer_parsed)
    if kept is None:
        return None
    try:
        settled = not kept or unequal(gold_parsed, kept)
    except Exception:  # noqa: BLE001 - our shortcut failed on this pair: math-verify's own `verify` decides
        settled = False
    return False if settled else bool(_math_verify().verify(gold_parsed, kept, timeout_seconds=None))


_SLOW: set[str] = set()  # texts whose parse ran out of time: not tried again in this process
_SLOW_MAX = 4096


def _parse(text: str) -> Any:
    if text in _SLOW:
        raise TimeLimit(f"parsing ran out of time before: {text[:50]!r}")
    try:
        return _parsed(text)
    except TimeLimit:
        if len(_SLOW) >= _SLOW_MAX:
            _SLOW.clear()
        _SLOW.add(text)
        raise


def warm_up() -> None:
    """Load math-verify and its LaTeX parser (a worker does this while the job reads its transcripts)."""
    _parsed("1")


Pair = tuple[str, str]  # (gold text, answer): what math-verify is asked


def open_pairs(ground_truth: Any, answer: str) -> list[Pair]:
    """The (gold, answer) pairs `equivalent` would ask math-verify about: those the texts do not settle."""
    return [(gold, answer) for gold in gold_texts(ground_truth) if _plainly_equal(gold, answer) is None]


def verify_pairs(pairs: list[Pair], seconds: float | None = TIME_LIMIT_SECONDS) -> list[bool | None]:
    """math-verify's verdict on each pair (None: out of time); runs in a judge worker or here."""
    return [_verified(gold, answer, seconds) for gold, answer in pairs]


def equivalent(
    ground_truth: Any,
    answer: str,
    *,
    seconds: float | None = TIME_LIMIT_SECONDS,
    known: Mapping[Pair, bool | None] | None = None,
) -> bool | None:
    """Whether `answer` equals one of the ground truth's values; None if math-verify ran out of time.

    `known` holds verdicts already computed for (gold, answer) pairs (a judging job's, from `verify_pairs`)."""
    timed_out = False
    for gold in gold_texts(ground_truth):
        plain = _plainly_equal(gold, answer)
        if plain is not None:
            result = plain
        elif known is not None and (gold, answer) in known:
            result = known[(gold, answer)]
        else:
            result = _verified(gold, answer, seconds)
        if result:
            return True
        timed_out = timed_out or result is None
    return None if timed_out else False
