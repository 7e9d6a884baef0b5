"""Pairs the judge settles as unequal from math-verify's parsed forms, without its `verify`
(`annotator/transcripts/judge/unequal_forms.py`, issue 20 item 1): wherever it settles a pair, `verify` itself says
not equal. Checked on generated pairs (numbers, fractions, roots, constants, percents, sets, tuples, intervals,
refusals, equations, letters) and on every ground truth of the shared data against the answers a leaderboard gives."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.transcripts.judge.equivalence import _math_verify, _parsed, gold_texts
from annotator.transcripts.judge.unequal_forms import unequal

REFUSALS = ["It's unsolvable", "it\u2019s unsolvable", "Sorry, I don't know", "sorry, I don\u2019t know",
            "I don't know", "unsolvable", "The problem is unsolvable", "no solution", "cannot be determined"]


def verify(gold: str, answer: str) -> bool:
    return bool(_math_verify().verify(_parsed(gold), _parsed(answer), timeout_seconds=None))


def settles_rightly(gold: str, answer: str) -> bool | None:
    """None when `unequal` leaves the pair to `verify`; else whether `verify` agrees that it is unequal."""
    gold_forms, answer_forms = _parsed(gold), _parsed(answer)
    if not gold_forms or not answer_forms or not unequal(gold_forms, answer_forms):
        return None
    return not verify(gold, answer)


# Golds with free symbols (what the refusals are checked against without `verify`), some sharing the refusals'
# letters: "It's unsolvable" reads as E*I*a*b*l*l*n*o*s*s*t*u*v, "Sorry, I don't know" as a set of two monomials.
SYMBOLIC = ["15x - 80", "\\frac{\\cos(2t)}{15}", "e^{-at}", "\\frac{1}{b-a}\\left(e^{-a t}-e^{-b t}\\right)", "u(t)",
            "x_{0} \\cos (\\omega t)", "\\sqrt{x}", "7.6Z", "lnostuvab", "abllnosstuv", "Eabllnosstuv",
            "\\text{It's unsolvable}", "orrsy", "dknnootw", "I d k n n o o t w", "\\{orrsy, dknnootw\\}", "s^2 + o",
            "x \\% ", "\\frac{x}{100}", "\\text{(C)}", "m", "\\sin^2 x + \\cos^2 x",
            "\\begin{pmatrix} a \\\\ b \\end{pmatrix}", "(a+5)(b+2)", "x < 3", "\\frac{d}{dx} 5x", "\\int_0^1 x dx",
            "\\ln(e^x) - x + 3", "\\frac{x^2 - 1}{x - 1} - x", "\\frac{\\sqrt{2}}{4} \\cos (t-\\pi / 4)",
            "I(0)e^{-\\frac{t}{RC}}",
            "1 + i\\sqrt{3}", "\\frac{2\\pi}{\\omega}", "x^8 + x^7 + x + 1", "\\tan^{-1} x", "\\cosh^2 x - \\sinh^2 x",
            "\\frac{1}{x} + 5 - \\frac{1}{x}"]
small = st.integers(-60, 60)
golds = st.one_of(
    small.map(str),
    st.tuples(small, st.integers(1, 12)).map(lambda p: f"\\frac{{{p[0]}}}{{{p[1]}}}"),
    st.tuples(st.integers(1, 9), st.integers(2, 50)).map(lambda p: f"{p[0]}\\sqrt{{{p[1]}}}"),
    st.tuples(small, st.integers(0, 999)).map(lambda p: f"{p[0]}.{p[1]:03d}"),
    small.map(lambda n: f"{n}\\%"),
    st.sampled_from(["\\pi", "2\\pi", "e", "\\frac{\\pi}{4}", "\\sqrt{2}/2", "3+2i", "\\infty", "x^2+1", "k",
                     "x = 5", "a+b", "\\text{Monday}"]),
    st.sampled_from(SYMBOLIC),
    st.lists(small, min_size=1, max_size=4).map(lambda ns: "(" + ",".join(map(str, ns)) + ")"),
    st.lists(small, min_size=1, max_size=4).map(lambda ns: "\\{" + ",".join(map(str, ns)) + "\\}"),
    st.tuples(small, small).map(lambda p: f"[{min(p)}, {max(p)}]"),
    st.tuples(small, small).map(lambda p: f"(-\\infty, {min(p)}) \\cup ({max(p)}, \\infty)"),
)
answers = st.one_of(
    small.map(str),
    st.tuples(small, st.integers(0, 99)).map(lambda p: f"{p[0]}.{p[1]:02d}"),
    st.tuples(small, st.integers(1, 12)).map(lambda p: f"\\frac{{{p[0]}}}{{{p[1]}}}"),
    st.sampled_from(REFUSALS + ["e", "x", "ab", "2x", "x^2", "x = 5", "k=3", "\\pi", "5\\%", "(1,2)", "\\{3\\}"]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=golds, answer=answers)
def test_a_pair_settled_as_unequal_is_unequal_to_math_verify(gold: str, answer: str) -> None:
    assert settles_rightly(gold, answer) in (None, True), (gold, answer)


def test_the_same_value_in_another_form_is_left_to_math_verify() -> None:
    # equal, or within rounding: `verify` decides, and says equal
    for gold, answer in [("\\frac{1}{2}", "0.5"), ("\\sqrt{4}", "2"), ("1/3", "0.333333"), ("9\\%", "9"),
                         ("(-\\infty, 2) \\cup (3, \\infty)", "(-\\infty, 2) \\cup (3, \\infty)")]:
        assert not unequal(_parsed(gold), _parsed(answer)), (gold, answer)
        assert verify(gold, answer), (gold, answer)


def test_refusals_and_wrong_numbers_are_settled() -> None:
    """The shortcut does its job: the pairs a leaderboard asks most (a refusal or a wrong whole number against a
    number, a fraction, a root, a tuple or an interval) need no `verify`."""
    for gold in ["12", "\\frac{3}{4}", "2\\sqrt{3}", "(1,-16,-4,43)", "(-\\infty, 2) \\cup (3, \\infty)", "\\pi"]:
        for answer in [*REFUSALS[:4], "161", "0.25"]:
            assert settles_rightly(gold, answer) is True, (gold, answer)


def test_refusals_and_numbers_against_golds_with_free_symbols_are_settled() -> None:
    """A refusal or a number against a gold with free symbols: `verify` would simplify their difference (tens or
    hundreds of ms)."""
    for gold in ["x^2+1", "15x - 80", "\\frac{\\cos(2t)}{15}", "e^{-at}", "\\frac{1}{b-a}(e^{-a t}-e^{-b t})"]:
        assert settles_rightly(gold, "161") is True, gold
        assert settles_rightly(gold, "0.25") is True, gold
    for gold in ["x^2+1", "15x - 80", "\\frac{\\cos(2t)}{15}", "e^{-at}", "(a+5)(b+2)", "m"]:
        assert settles_rightly(gold, "Sorry, I don't know") is True, gold
    for gold in ["x^2+1", "15x - 80", "\\frac{\\cos(2t)}{15}", "e^{-at}", "(a+5)(b+2)"]:
        assert settles_rightly(gold, "It's unsolvable") is True, gold


def test_what_it_cannot_prove_goes_to_math_verify() -> None:
    for gold, answer in [("\\sin^2 x + \\cos^2 x", "1"), ("\\frac{d}{dx} 5x", "5"),  # constant functions
                         ("u(t)", "5"), ("lnostuvab", "It's unsolvable"),  # an unknown function; no symbol of its own
                         ("m", "It's unsolvable"),  # a bare symbol gold: math-verify joins the answer's letters
                         ("e", "e"), ("12", "x = 12"),  # a bare symbol; an equation's right side
                         ("\\{5\\}", "5"), ("12\\%", "12"), ("12", "12.0000001")]:  # a singleton; a percent; close
        assert not unequal(_parsed(gold), _parsed(answer)), (gold, answer)


def _shared_golds(shared_data: Path) -> list[str]:
    found: set[str] = set()
    for path in sorted((shared_data / "reliablemath").glob("*/*.json")):
        for record in json.loads(path.read_text(encoding="utf-8")):
            found.update(gold_texts(record["ground_truth"]))
    return sorted(found)


def test_every_shared_ground_truth_against_leaderboard_answers(shared_data: Path) -> None:
    golds = _shared_golds(shared_data)
    assert len(golds) > 300
    results = []
    for gold in golds:
        stripped = gold.strip("$. ")
        near = [str(int(stripped) + 1), f"{int(stripped)}.0"] if stripped.lstrip("-").isdigit() else []
        for answer in [*REFUSALS[:4], "7", "161", "0.5", "x", "2x", *near]:
            results.append((gold, answer, settles_rightly(gold, answer)))
    wrong = [(gold, answer) for gold, answer, right in results if right is False]
    assert wrong == []
    assert sum(right is True for *_, right in results) > 2000  # most of them need no `verify`
