"""The judge's comparison of an answer with the ground truth never raises and always ends: an answer sympy cannot
order (NaN), one too big to evaluate (exponent towers), too long or too deeply nested to parse, or any string at all
gets a verdict, or None (undecided, as out of time), within the limit, against every shape of ground truth."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.transcripts.judge.equivalence import _math_verify, _parsed, equivalent, gold_texts
from annotator.transcripts.judge.pair_workers import HARD_LIMIT_SECONDS, Workers
from annotator.transcripts.judge.verdicts import PairVerifier
from tests.support.edge_answers import EDGE_ANSWERS

# A ground truth the release stores in a list's text, and a model's answer that writes that list out in LaTeX.
LISTED_GOLD = "['m_{p} c^{2}(\\\\gamma^{2}-1) \\\\sin ^{2} \\\\theta']"
LISTED_ECHO = "['m_{p} c^{2}(\\gamma^{2}-1) \\sin ^{2} \\theta']"
# One ground truth of each shape the release has: integers, decimals, fractions, intervals, lists, expressions.
GOLD_SHAPES = ["5", "-2", "0.003", "\\frac{1}{2}", "(0, 1]", "\\{1, 2\\}", "x^2 + 1", "\\frac{\\cos(2t)}{15}",
               LISTED_GOLD, "['6630.65\\n', '6630\\n']", "\\sqrt{3}", "15\\%"]
EDGE_GOLDS = ["5", "\\frac{1}{2}", "(0, 1]", "x^2 + 1", LISTED_GOLD]


def _shaped(gold: str) -> str:
    text = gold.strip()
    if text.startswith("["):
        return "list"
    if text.lstrip("-").isdigit():
        return "integer"
    if any(c.isalpha() for c in text.replace("\\frac", "").replace("\\sqrt", "")):
        return "expression"
    return "number"


@pytest.fixture(scope="module")
def release_golds(shared_data: Path) -> list[str]:
    """A few ground truths of each shape in the release (as `gold_texts` gives them)."""
    by_shape: dict[str, list[str]] = {}
    for name in ("solve.json", "unsol.json"):
        for record in json.loads((shared_data / "reliablemath" / name).read_text(encoding="utf-8")):
            for gold in gold_texts(record.get("ground_truth")):
                kept = by_shape.setdefault(_shaped(gold), [])
                if len(kept) < 6 and gold not in kept:
                    kept.append(gold)
    assert set(by_shape) == {"list", "integer", "expression", "number"}
    return [gold for golds in by_shape.values() for gold in golds]


def test_an_answer_echoing_a_listed_ground_truth_gets_math_verifys_own_verdict() -> None:
    """Our shortcut (`unequal_forms`) met a NaN coefficient in this pair and raised; math-verify decides it."""
    own = bool(_math_verify().verify(_parsed(LISTED_GOLD), _parsed(LISTED_ECHO), timeout_seconds=None))
    assert equivalent(LISTED_GOLD, LISTED_ECHO) is own
    assert equivalent(LISTED_GOLD, LISTED_GOLD) is True


@pytest.mark.parametrize("answer", ["2^{2^{40}}", "10^{10^{10}}", "9^{9^{9}}", "(10^{9})!", "-10^{10^{10}}"])
@pytest.mark.parametrize("gold", ["5", "\\frac{1}{2}", "x^2 + 1", "(0, 1]"])
def test_a_number_of_billions_of_digits_equals_no_short_ground_truth(gold: str, answer: str) -> None:
    assert equivalent(gold, answer) is False


@pytest.mark.parametrize("answer", ["10^{10^{10}} - 10^{10^{10}}", "\\frac{10^{10^{10}}}{10^{10^{10}}}",
                                    "x = 10^{10^{10}}", "{" * 500 + "1" + "}" * 500, " + ".join(["x"] * 12_000)])
def test_what_cannot_be_evaluated_at_an_affordable_cost_is_undecided(answer: str) -> None:
    assert equivalent("1", answer) is None


def test_numbers_that_are_big_but_affordable_are_still_compared() -> None:
    assert equivalent("65536", "2^{2^{2^{2}}}") is True
    assert equivalent("120", "\\prod_{k=1}^{5} k") is True
    assert equivalent("10^{1000}", "10^{1000}") is True


@pytest.fixture(scope="module")
def worker() -> Iterator[PairVerifier]:
    """A judge worker, as a big import's: it holds each pair to its hard limit, even one stuck in C."""
    with ExitStack() as stack:
        yield PairVerifier(Workers(stack, 1))


@pytest.mark.parametrize("answer", EDGE_ANSWERS, ids=range(len(EDGE_ANSWERS)))
def test_every_edge_answer_gets_a_verdict_against_every_ground_truth_shape(answer: str, worker: PairVerifier) -> None:
    pairs = [(gold, answer) for gold in EDGE_GOLDS]
    started = time.monotonic()
    worker.ask_pairs(pairs)
    known = worker.known()
    assert all(known[pair] in (True, False, None) for pair in pairs)
    # Within the hard limit per pair, and a new worker's start if one ended.
    assert time.monotonic() - started < len(pairs) * HARD_LIMIT_SECONDS + 30


_LEAVES = st.one_of(
    st.integers(-10**6, 10**6).map(str), st.sampled_from(["x", "t", "\\pi", "e", "\\infty", "\\text{NaN}", "0.5",
                                                        "10^{10^{10}}", "\\tilde{\\infty}", "\u0664\u0662", "\u00bd"]),
)


def _combined(parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(parts, parts)
    return st.one_of(
        pair.map(lambda p: f"{p[0]} + {p[1]}"), pair.map(lambda p: f"{p[0]} - {p[1]}"),
        pair.map(lambda p: f"{p[0]}^{{{p[1]}}}"), pair.map(lambda p: f"\\frac{{{p[0]}}}{{{p[1]}}}"),
        pair.map(lambda p: f"({p[0]}, {p[1]}]"), pair.map(lambda p: f"\\{{{p[0]}, {p[1]}\\}}"),
        pair.map(lambda p: f"['{p[0]}', '{p[1]}']"), parts.map(lambda p: f"\\sqrt{{{p}}}"),
        parts.map(lambda p: f"({p})!"), parts.map(lambda p: f"\\left( {p} \\right)"),
    )


LATEX = st.recursive(_LEAVES, _combined, max_leaves=6)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_answer_against_any_ground_truth_of_the_release_gets_a_verdict(
    release_golds: list[str], worker: PairVerifier, data: st.DataObject
) -> None:
    gold = data.draw(st.sampled_from(release_golds + GOLD_SHAPES), label="gold")
    answer = data.draw(st.one_of(st.text(max_size=40), LATEX), label="answer")
    worker.ask_pairs([(gold, answer)])
    assert worker.known()[(gold, answer)] in (True, False, None)
    # The parsed forms must not fail the shortcuts either: in this process too, a verdict.
    assert equivalent(gold, answer, seconds=1.0) in (True, False, None)
