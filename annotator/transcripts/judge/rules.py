"""The automatic judge: a response's class and its verdict (ReliableMath Section 4, Table 1, Eq. 1-2).

Classes (`JudgeClass`): `unmatched` (no boxed answer), `correct` (equivalent to the ground truth),
`unsolvable`, `unknown` ("don't know"), `incorrect`. Verdicts (`Verdict`): on a solvable item S = correct,
R = unknown, F = the rest; on an unsolvable item S = unsolvable, R = unknown, F = the rest, the original
answer included.

Two rule sets:
- `reliablemath-exact` is the reference code (`ReliableRewardMathFn` in `code/metrics/rewards/math_reward.py`
  of a public fork of the authors' repository, yi-qian-zhang/ReliableMath): unmatched, then correct, then
  "unsolvable" (case-sensitive) in the boxed answer, then "don’t know" (U+2019 only), else incorrect.
- `reliablemath` (the default) checks the phrases first, in any case and with either apostrophe: math-verify
  reads "it's unsolvable" as a product of one-letter symbols.
TreeCut items follow TreeCut's rule under both (Appendix B.2): lower-case the response; "unknown" after the
last "answer" says the problem cannot be answered (class `unsolvable`), otherwise the number there is the answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from annotator.database.vocabulary import JudgeClass, Verdict
from annotator.transcripts.judge import answers, equivalence
from annotator.transcripts.judge.equivalence import Pair, equivalent

Known = Mapping[Pair, bool | None] | None


@dataclass(frozen=True)
class Rule:
    name: str
    version: str  # stored with each verdict; bump it when the rule's behaviour changes
    exact: bool  # the reference code's phrase matching and order


RULES = {
    "reliablemath": Rule("reliablemath", "1", exact=False),
    "reliablemath-exact": Rule("reliablemath-exact", "1", exact=True),
}
DEFAULT_RULE = "reliablemath"
# The LLM judge (`annotator.transcripts.judge.llm`): a rule too, but judged by a model in a run of its own, so not
# in RULES (which are applied in process); its verdicts name the model and the prompt version.
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


def rule(name: str) -> Rule:
    """The rule set of this name; ValueError naming the choices otherwise."""
    try:
        return RULES[name]
    except KeyError:
        raise ValueError(f"unknown judge rule {name!r}; choose one of {', '.join(RULES)}") from None


def _classify(answer: str, exact: bool, correct: Callable[[], bool | None]) -> tuple[JudgeClass, bool]:
    """The class of a boxed answer under one rule set, and whether math-verify ran out of time."""
    phrase = (
        JudgeClass.unsolvable
        if answers.says_unsolvable(answer, exact=exact)
        else JudgeClass.unknown
        if answers.says_unknown(answer, exact=exact)
        else None
    )
    if phrase is not None and not exact:
        return phrase, False
    is_correct = correct()
    if is_correct:
        return JudgeClass.correct, False
    return phrase or JudgeClass.incorrect, is_correct is None


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


def judge_both(
    response: str, question: Question, *, rule_name: str = DEFAULT_RULE, known: Known = None
) -> tuple[Judgement, bool]:
    """The judgement under `rule_name`, and whether the other rule set gives another verdict.

    Both rule sets share one extraction and at most one math-verify call; `known` holds math-verify's verdicts
    already computed for (gold, answer) pairs (`equivalence.verify_pairs`)."""
    return judge_final(final_text(response, question), question, rule_name=rule_name, known=known)


def judge_final(
    final: str | None, question: Question, *, rule_name: str = DEFAULT_RULE, known: Known = None
) -> tuple[Judgement, bool]:
    """`judge_both` of a response whose `final_text` is `final` (responses with the same final text and item get
    the same judgement)."""
    chosen = rule(rule_name)
    if question.treecut:
        extracted, judge_class = _treecut(final, question, known)
        return Judgement(extracted, judge_class, verdict_of(judge_class, unsolvable=question.unsolvable)), False
    boxed = final
    if boxed is None:
        verdict = verdict_of(JudgeClass.unmatched, unsolvable=question.unsolvable)
        return Judgement(None, JudgeClass.unmatched, verdict), False
    memo: list[bool | None] = []

    def correct() -> bool | None:
        if not memo:
            memo.append(equivalent(question.ground_truth, boxed, known=known))
        return memo[0]

    results = {exact: _classify(boxed, exact, correct) for exact in (chosen.exact, not chosen.exact)}
    verdicts = {exact: verdict_of(cls, unsolvable=question.unsolvable) for exact, (cls, _) in results.items()}
    judge_class, timed_out = results[chosen.exact]
    judgement = Judgement(boxed, judge_class, verdicts[chosen.exact], timed_out)
    return judgement, verdicts[True] != verdicts[False]


def judge_response(response: str, question: Question, *, rule_name: str = DEFAULT_RULE) -> Judgement:
    """One response's judgement under one rule set."""
    return judge_both(response, question, rule_name=rule_name)[0]
