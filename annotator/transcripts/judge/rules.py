"""The automatic judge: a response's class and its verdict (ReliableMath Section 4, Table 1, Eq. 1-2).

Classes (`JudgeClass`): `unmatched` (no boxed answer), `correct` (equivalent to the ground truth),
`unsolvable`, `unknown` ("don't know"), `incorrect`. Verdicts (`Verdict`): on a solvable item S = correct,
R = unknown, F = the rest; on an unsolvable item S = unsolvable, R = unknown, F = the rest, the original
answer included.

How a boxed answer is classified is a rule set's (`rule_sets.registry.RULE_SETS`: `reliablemath`, the reference
rule, and `reliablemath-exact`, the authors' code). A judgement under one rule set says too whether its verdict
differs from the reference rule's (under the reference rule: whether another rule set's does); every rule set
shares the response's one extraction and at most one math-verify call.
TreeCut items follow TreeCut's rule under every rule set (Appendix B.2): lower-case the response; "unknown" after
the last "answer" says the problem cannot be answered (class `unsolvable`), otherwise the number there is the answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotator.database.vocabulary import JudgeClass, Verdict
from annotator.transcripts.judge import answers, equivalence
from annotator.transcripts.judge.equivalence import Pair, equivalent
from annotator.transcripts.judge.rule_sets import registry
from annotator.transcripts.judge.rule_sets.registry import REFERENCE_RULE
from annotator.transcripts.judge.rule_sets.rule_set import RuleSet

Known = Mapping[Pair, bool | None] | None


# The LLM judge (`annotator.transcripts.judge.llm`): a rule too, but judged by a model in a run of its own, so not
# in RULE_SETS (which are applied in process); its verdicts name the model and the prompt version.
LLM_RULE = "llm"
VERSION_CHARS = 50  # Transcript.judge_version's length


def judge_version(model: str, prompt_version: str) -> str:
    """The transcript's `judge_version` for an LLM judge: `MODEL@VERSION`; a model name too long for the column
    keeps its end (where names differ: size, tuning) and a short hash of the whole name."""
    name = f"{model}@{prompt_version}"
    if len(name) <= VERSION_CHARS:
        return name
    digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:8]
    keep = max(1, VERSION_CHARS - len(prompt_version) - len(digest) - 3)
    return f"…{model[-keep:]}~{digest}@{prompt_version}"[:VERSION_CHARS]


@dataclass(frozen=True)
class Question:
    """What the judge needs to know of an item."""

    ground_truth: Any
    unsolvable: bool
    treecut: bool = False


@dataclass(frozen=True)
class Judgement:
    extracted_answer: str | None
    judge_class: JudgeClass
    verdict: Verdict
    timed_out: bool = False  # math-verify ran out of time: counted as incorrect


def verdict_of(judge_class: JudgeClass, *, unsolvable: bool) -> Verdict:
    """S/R/F of a class on a solvable or an unsolvable item (ReliableMath Table 1)."""
    if judge_class == JudgeClass.unknown:
        return Verdict.R
    success = JudgeClass.unsolvable if unsolvable else JudgeClass.correct
    return Verdict.S if judge_class == success else Verdict.F


def rule(name: str) -> RuleSet:
    """The rule set of this name; ValueError naming the choices otherwise."""
    return registry.load(name)


class _MathVerify:
    """math-verify's verdict on one boxed answer (`registry.Correct`), asked when a rule set first needs it."""

    __slots__ = ("_answer", "_gold", "_known", "asked", "value")

    def __init__(self, gold: Any, answer: str, known: Known) -> None:
        self._gold, self._answer, self._known = gold, answer, known
        self.asked = False
        self.value: bool | None = None

    def __call__(self) -> bool | None:
        if not self.asked:
            self.asked = True
            self.value = equivalent(self._gold, self._answer, known=self._known)
        return self.value


def final_text(response: str, question: Question) -> str | None:
    """What a response's judgement depends on: its last boxed answer, or on a TreeCut item the lower-cased text
    after its last "answer"; None when there is none (unmatched)."""
    return answers.treecut_answer(response) if question.treecut else answers.last_boxed(response)


def _treecut(tail: str | None, question: Question, known: Known) -> tuple[str | None, JudgeClass]:
    if tail is None:
        return None, JudgeClass.unmatched
    if "unknown" in tail:
        return "unknown", JudgeClass.unsolvable
    number = answers.first_number(tail)
    if number is None:
        return tail[:200], JudgeClass.incorrect
    correct = equivalent(question.ground_truth, number, known=known)
    return number, JudgeClass.correct if correct else JudgeClass.incorrect


def final_pairs(final: str | None, question: Question) -> list[Pair]:
    """The (gold, answer) pairs judging a response with this `final_text` would ask math-verify about (none the
    texts settle)."""
    if final is None:
        return []
    if question.treecut:
        number = None if "unknown" in final else answers.first_number(final)
        return [] if number is None else equivalence.open_pairs(question.ground_truth, number)
    return equivalence.open_pairs(question.ground_truth, final)


def open_pairs(response: str, question: Question) -> list[Pair]:
    """The (gold, answer) pairs judging this response would ask math-verify about (none the texts settle)."""
    return final_pairs(final_text(response, question), question)


def _alike(final: str | None, question: Question, known: Known) -> Judgement | None:
    """The judgement every rule set gives a TreeCut item's response or one without a final answer; None for the
    others."""
    if question.treecut:
        extracted, judge_class = _treecut(final, question, known)
        return Judgement(extracted, judge_class, verdict_of(judge_class, unsolvable=question.unsolvable))
    if final is None:
        return Judgement(None, JudgeClass.unmatched, verdict_of(JudgeClass.unmatched, unsolvable=question.unsolvable))
    return None


@dataclass(frozen=True)
class Judge:
    """Judging under one chosen rule set, against the reference rule: `judge_for` makes one."""

    chosen: RuleSet
    reference: RuleSet
    others: tuple[RuleSet, ...]  # every rule set but the reference

    def final(self, final: str | None, question: Question, known: Known = None) -> tuple[Judgement, bool]:
        """The judgement of a response whose `final_text` is `final`, and whether it differs from the reference
        rule's (under the reference rule: whether another rule set's verdict differs from it). Each rule set
        classifies the answer at most once; `known` holds math-verify's verdicts already computed."""
        shared = _alike(final, question, known)
        if shared is not None:
            return shared, False
        assert final is not None  # `_alike` judges a response without a final text
        correct = _MathVerify(question.ground_truth, final, known)
        judge_class = self.chosen.classify(final, correct)
        verdict = verdict_of(judge_class, unsolvable=question.unsolvable)
        judgement = Judgement(final, judge_class, verdict, correct.asked and correct.value is None)
        if self.chosen is not self.reference:
            return judgement, verdict_of(self.reference.classify(final, correct),
                                         unsolvable=question.unsolvable) != verdict
        return judgement, any(verdict_of(other.classify(final, correct), unsolvable=question.unsolvable) != verdict
                              for other in self.others)

    def response(self, response: str, question: Question, known: Known = None) -> tuple[Judgement, bool]:
        """`final` of a whole response."""
        return self.final(final_text(response, question), question, known)


def judge_for(rule_name: str = REFERENCE_RULE) -> Judge:
    """A `Judge` under the rule set `rule_name` (ValueError naming the choices for another name)."""
    chosen = rule(rule_name)
    loaded = {name: chosen if name == chosen.name else rule(name) for name in registry.names()}
    reference = loaded[REFERENCE_RULE]
    return Judge(chosen, reference, tuple(found for found in loaded.values() if found is not reference))


def every_verdict(response: str, question: Question, rule_sets: Sequence[RuleSet]) -> list[Verdict]:
    """The verdict of each of `rule_sets` on a response, in their order (math-verify asked at most once)."""
    final = final_text(response, question)
    shared = _alike(final, question, None)
    if shared is not None:
        return [shared.verdict] * len(rule_sets)
    assert final is not None  # `_alike` judges a response without a final text
    correct = _MathVerify(question.ground_truth, final, None)
    return [verdict_of(rule_set.classify(final, correct), unsolvable=question.unsolvable) for rule_set in rule_sets]


def judge_with_reference(
    response: str, question: Question, *, rule_name: str = REFERENCE_RULE, known: Known = None
) -> tuple[Judgement, bool]:
    """The judgement under `rule_name`, and whether it differs from the reference rule's (`Judge.final`); `known`
    holds math-verify's verdicts already computed for (gold, answer) pairs (`equivalence.verify_pairs`). A caller
    judging many responses makes one `judge_for` and asks it."""
    return judge_for(rule_name).response(response, question, known)


def judge_response(response: str, question: Question, *, rule_name: str = REFERENCE_RULE) -> Judgement:
    """One response's judgement under one rule set."""
    return judge_with_reference(response, question, rule_name=rule_name)[0]
