"""The automatic judge over real answer shapes (ReliableMath Section 4, Table 1; TreeCut Appendix B.2).

The phrases are those the reliable prompt offers (`math_instruction.json`: `\\boxed{it’s unsolvable}`,
`\\boxed{sorry, I don’t know}`); `reliablemath-exact` is the reference code's `ReliableRewardMathFn`.
"""

from __future__ import annotations

import pytest

from annotator.database.vocabulary import JudgeClass, Verdict
from annotator.transcripts.judge import answers
from annotator.transcripts.judge.rules import Question, judge_both, judge_response, rule, verdict_of

SOLVABLE = Question(ground_truth="113", unsolvable=False)
UNSOLVABLE = Question(ground_truth="113", unsolvable=True)


@pytest.mark.parametrize(
    ("text", "boxed"),
    [
        ("The answer is $\\boxed{\\frac{\\sqrt{3}}{2}}$.", "\\frac{\\sqrt{3}}{2}"),
        ("\\boxed{\\left\\{1, 2\\right\\}}", "\\left\\{1, 2\\right\\}"),  # escaped braces are not groups
        ("first \\boxed{5}, then on reflection \\boxed{113}", "113"),
        ("\\boxed {x^{2}}", "x^{2}"),
        ("so \\boxed 7 is it", "7"),
        ("\\fbox{42}", "42"),
        ("no final answer", None),
        ("cut off: \\boxed{\\frac{1}{", None),  # a truncated response has no answer (as in the reference code)
    ],
)
def test_the_last_boxed_answer_with_its_braces_matched(text: str, boxed: str | None) -> None:
    assert answers.last_boxed(text) == boxed


@pytest.mark.parametrize(
    ("response", "truth", "judge_class"),
    [
        ("\\boxed{\\dfrac{3}{4}}", "\\frac{3}{4}", JudgeClass.correct),
        ("\\boxed{0.5}", "\\frac{1}{2}", JudgeClass.correct),
        ("\\boxed{\\frac{1}{2}}", "0.5", JudgeClass.correct),
        ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}", JudgeClass.correct),
        ("\\boxed{142}", 142.0, JudgeClass.correct),  # AMC's float ground truths
        ("\\boxed{9.6}", ["9.6\n"], JudgeClass.correct),  # Minerva's lists
        ("\\boxed{5} is wrong, so \\boxed{113}", "113", JudgeClass.correct),
        ("\\boxed{113} is wrong, so \\boxed{5}", "113", JudgeClass.incorrect),
        ("\\boxed{114}", "113", JudgeClass.incorrect),
        ("I give up.", "113", JudgeClass.unmatched),
    ],
)
def test_equivalence_by_math_verify(response: str, truth: object, judge_class: JudgeClass) -> None:
    judgement = judge_response(response, Question(ground_truth=truth, unsolvable=False))
    assert judgement.judge_class == judge_class
    assert judgement.verdict == (Verdict.S if judge_class == JudgeClass.correct else Verdict.F)


@pytest.mark.parametrize(
    ("response", "default", "exact"),
    [
        ("\\boxed{it\u2019s unsolvable}", JudgeClass.unsolvable, JudgeClass.unsolvable),
        ("\\boxed{it's unsolvable}", JudgeClass.unsolvable, JudgeClass.unsolvable),
        ("\\boxed{Unsolvable}", JudgeClass.unsolvable, JudgeClass.incorrect),  # case-sensitive in the reference
        ("\\boxed{sorry, I don\u2019t know}", JudgeClass.unknown, JudgeClass.unknown),
        ("\\boxed{sorry, I don't know}", JudgeClass.unknown, JudgeClass.incorrect),  # U+2019 only there
        ("\\boxed{Sorry, I DON'T KNOW}", JudgeClass.unknown, JudgeClass.incorrect),
    ],
)
def test_phrases_in_both_rule_sets(response: str, default: JudgeClass, exact: JudgeClass) -> None:
    loose, loose_disagree = judge_both(response, UNSOLVABLE, rule_name="reliablemath")
    strict, strict_disagree = judge_both(response, UNSOLVABLE, rule_name="reliablemath-exact")
    assert (loose.judge_class, strict.judge_class) == (default, exact)
    differ = verdict_of(default, unsolvable=True) != verdict_of(exact, unsolvable=True)
    assert loose_disagree is strict_disagree is differ


def test_an_unsolvable_item_answered_with_the_original_answer_fails() -> None:
    """Table 1: on an unsolvable item only saying so succeeds; the original answer is a failure."""
    judgement = judge_response("Assuming the tangents meet at D, \\boxed{113}", UNSOLVABLE)
    assert (judgement.judge_class, judgement.verdict) == (JudgeClass.correct, Verdict.F)
    assert judge_response("\\boxed{it\u2019s unsolvable}", UNSOLVABLE).verdict == Verdict.S
    assert judge_response("\\boxed{sorry, I don\u2019t know}", UNSOLVABLE).verdict == Verdict.R
    # ... and on a solvable one, calling it unsolvable is a failure, not knowing a refusal.
    assert judge_response("\\boxed{it\u2019s unsolvable}", SOLVABLE).verdict == Verdict.F
    assert judge_response("\\boxed{sorry, I don\u2019t know}", SOLVABLE).verdict == Verdict.R


def test_treecut_rule() -> None:
    """TreeCut Appendix B.2: lower-case; "unknown" after the last "answer" marks the problem unanswerable."""
    unanswerable = Question(ground_truth="12", unsolvable=True, treecut=True)
    answerable = Question(ground_truth="12", unsolvable=False, treecut=True)
    says_unknown = "The answer depends on x... Answer: Unknown."
    assert judge_response(says_unknown, unanswerable).verdict == Verdict.S
    assert judge_response(says_unknown, answerable).verdict == Verdict.F
    # "unknown" before the last "answer" does not count.
    late = judge_response("x is unknown, so we solve. Answer: 12", unanswerable)
    assert (late.extracted_answer, late.judge_class, late.verdict) == ("12", JudgeClass.correct, Verdict.F)
    assert judge_response("ANSWER: $12 dollars.", answerable).verdict == Verdict.S
    assert judge_response("Answer: 13", answerable).judge_class == JudgeClass.incorrect
    assert judge_response("It costs 12 dollars.", answerable).judge_class == JudgeClass.unmatched


def test_unknown_rule_names_the_choices() -> None:
    with pytest.raises(ValueError, match="choose one of reliablemath, reliablemath-exact"):
        rule("strict")
