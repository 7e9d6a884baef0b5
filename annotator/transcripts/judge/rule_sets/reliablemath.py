"""`reliablemath`, the reference rule: the reliable prompt's phrases first (`\\boxed{it’s unsolvable}`,
`\\boxed{sorry, I don’t know}`), in any case and with either apostrophe, then math-verify. math-verify reads
"it's unsolvable" as a product of one-letter symbols, so the phrases must come before it."""

from __future__ import annotations

from annotator.database.vocabulary import JudgeClass
from annotator.transcripts.judge import answers
from annotator.transcripts.judge.rule_sets.rule_set import Correct, RuleSet


def classify(answer: str, correct: Correct) -> JudgeClass:
    if answers.says_unsolvable(answer, exact=False):
        return JudgeClass.unsolvable
    if answers.says_unknown(answer, exact=False):
        return JudgeClass.unknown
    return JudgeClass.correct if correct() else JudgeClass.incorrect


RULE_SET = RuleSet("reliablemath", "1", classify)
