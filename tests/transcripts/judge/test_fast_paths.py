"""The judge settles some (gold, answer) pairs by their text alone, without math-verify (`equivalence._plainly_equal`:
the same text, or two plain numbers). Wherever it settles a pair it must give math-verify's own verdict: compared
here on generated pairs and on every ground truth of the shared data with answers in several dresses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.transcripts.judge.equivalence import _plainly_equal, _verified, gold_texts, open_pairs, verify_pairs


def math_verify(gold: str, answer: str) -> bool | None:
    return _verified(gold, answer, None)


def _dressed(number: str) -> st.SearchStrategy[str]:
    """`number` as a model may box it: in `$...$`, with LaTeX spacing, a trailing period, spaces around."""
    return st.sampled_from(["{}", "${}$", "{}.", " {} ", "\\, {}", "{}\\!", "\\;{}", "$ {} $."]).map(
        lambda template: template.format(number)
    )


integers = st.integers(min_value=-10**7, max_value=10**7).map(str)
leading_zeros = st.integers(min_value=0, max_value=999).map(lambda n: f"{n:03d}")
decimals = st.tuples(st.integers(-9999, 9999), st.integers(0, 9999)).map(lambda p: f"{p[0]}.{p[1]}")
numbers = st.one_of(integers, leading_zeros, decimals)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=numbers, answer=numbers.flatmap(_dressed))
def test_numbers_settled_by_text_get_math_verifys_verdict(gold: str, answer: str) -> None:
    settled = _plainly_equal(gold, answer)
    if settled is not None:
        assert settled == math_verify(gold, answer), (gold, answer)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=numbers, data=st.data())
def test_the_same_number_in_another_dress(gold: str, data: st.DataObject) -> None:
    answer = data.draw(_dressed(gold))
    settled = _plainly_equal(gold, answer)
    assert settled in (None, math_verify(gold, answer)), (gold, answer)
    # Bare or padded with spaces, the same number is settled without math-verify.
    assert _plainly_equal(gold, f" {gold} ") is True
    if gold.isdigit():
        assert _plainly_equal(gold, f"0{gold}") is True


def _shared_golds(shared_data: Path) -> list[str]:
    golds: set[str] = set()
    for path in sorted((shared_data / "reliablemath").glob("*/*.json")):
        for record in json.loads(path.read_text(encoding="utf-8")):
            golds.update(gold_texts(record["ground_truth"]))
    return sorted(golds)


def _variants(gold: str) -> list[str]:
    """Answers a model may give to this ground truth: itself in other dress, and near misses."""
    variants = [gold, f"${gold}$", f"{gold}.", f"\\, {gold} ", gold.replace("\\frac", "\\dfrac")]
    stripped = gold.strip("$. ")
    if stripped.lstrip("-").isdigit():
        variants += [str(int(stripped) + 1), str(int(stripped)), f"{int(stripped)}.0"]
    return variants


def test_every_shared_ground_truth_settled_by_text_gets_math_verifys_verdict(shared_data: Path) -> None:
    golds = _shared_golds(shared_data)
    assert len(golds) > 300
    settled = [(gold, answer, _plainly_equal(gold, answer)) for gold in golds for answer in _variants(gold)]
    differ = [(g, a, s) for g, a, s in settled if s is not None and s != math_verify(g, a)]
    assert sum(s is not None for *_, s in settled) > 900
    assert differ == []


def test_open_pairs_are_those_the_text_does_not_settle() -> None:
    assert open_pairs(["12", "\\frac{1}{2}"], "0.5") == [("12", "0.5"), ("\\frac{1}{2}", "0.5")]
    assert open_pairs(42.0, " 42 ") == [] and open_pairs("042", "42") == []  # the same number: settled
    assert open_pairs(42.0, "$42$.") == [("42", "$42$.")]  # math-verify reads it
    assert open_pairs("x^2", "x^{2}") == [("x^2", "x^{2}")]
    assert verify_pairs([("\\frac{1}{2}", "0.5"), ("12", "0.5")]) == [True, False]


@pytest.mark.parametrize("gold", ["7", "-3", "0.25", "023"])
def test_a_pair_is_judged_alike_with_its_verdict_known_or_not(gold: str) -> None:
    from annotator.transcripts.judge.rules import Question, judge_both
    from annotator.transcripts.judge.rules import open_pairs as response_pairs

    question = Question(ground_truth=gold, unsolvable=False)
    for response in (f"so \\boxed{{{gold}}}", "\\boxed{\\frac{14}{2}}", "\\boxed{It's unsolvable}", "\\boxed{x}"):
        pairs = response_pairs(response, question)
        known = dict(zip(pairs, verify_pairs(pairs)))
        assert judge_both(response, question, known=known) == judge_both(response, question)
