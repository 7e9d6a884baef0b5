"""`reliablemath-exact`: the ReliableMath authors' code (`ReliableRewardMathFn` in
`code/metrics/rewards/math_reward.py` of a public fork of their repository, yi-qian-zhang/ReliableMath):
correct when math-verify says so, then "unsolvable" (case-sensitive) in the boxed answer, then "don’t know"
(U+2019 only), else incorrect."""

from __future__ import annotations

from annotator.database.vocabulary import JudgeClass
from annotator.transcripts.judge import answers
from annotator.transcripts.judge.rule_sets.rule_set import Correct, RuleSet


def classify(answer: str, correct: Correct) -> JudgeClass:
    if correct():
        return JudgeClass.correct
    if answers.says_unsolvable(answer, exact=True):
        return JudgeClass.unsolvable
    if answers.says_unknown(answer, exact=True):
        return JudgeClass.unknown
    return JudgeClass.incorrect


RULE_SET = RuleSet("reliablemath-exact", "1", classify)
