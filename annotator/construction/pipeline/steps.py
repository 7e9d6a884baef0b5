"""The LLM steps of ReliableMath construction (Steps 1-2), each: build the prompt, ask, parse the answer.

Step 1 (question rewriting): M_I lists necessary conditions of a problem (`extract`; the prompt asks for
one to three, every one listed is kept unless `max_conditions` says otherwise); for each condition M_R
rewrites the problem by removing or contradicting it, with an analysis (`rewrite`). A run of Step 1 alone
leaves its candidates `unverified`, outside the queue. Step 2 (model verification, `verify`): M_I
sees the original question, its answer and the rewritten question (not the extracted condition) and judges
whether the rewrite removed (or contradicted) some key condition while keeping the others unchanged; M_R
judges whether the result is unsolvable (analysis + True/False). A candidate passing both gets its
`rewritten_condition` (M_I) and `unsolvable_reason` (M_R) and joins the queue (`pending`); the others are
marked `filtered`. The prompts are the files in
`prompts/<version>/` (`extract`, `rewrite_*`, `verify_*`, `unsolvable_*`, `condition_*`, `reason_*`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from annotator.construction.pipeline import parsing
from annotator.construction.pipeline.drafts import (
    NOT_ONE_CONDITION,
    REWRITE_UNREADABLE,
    STILL_SOLVABLE,
    UNSOLVABLE_UNREADABLE,
    VERIFICATION_UNREADABLE,
    Draft,
    ProblemInput,
    answer_text,
)
from annotator.construction.pipeline.options import EXTRACT, REWRITE, GenerateOptions
from annotator.construction.pipeline.prompts import PromptSet
from annotator.database.vocabulary import CandidateStatus
from annotator.runs.llm import Completion, LLMCallFailed, Messages


class Client(Protocol):
    """What the steps need of a client (`annotator.runs.llm.LLMClient`, or the benchmark's sequential one)."""

    async def complete(self, role: str, messages: Messages, *, priority: float = 0) -> Completion: ...


class ItemFailed(Exception):
    """A request of the item failed for good (after its retries)."""

    def __init__(self, step: str, error: LLMCallFailed) -> None:
        super().__init__(f"{step}: {error}")
        self.step = step
        self.error = error


class Unparseable(Exception):
    """A problem's conditions could not be read from the extraction (nothing to rewrite)."""

    def __init__(self, step: str, error: parsing.ParseError, record: dict[str, Any]) -> None:
        super().__init__(f"{step}: {error}")
        self.step = step
        self.record = record


class Pipeline:
    """The steps, bound to a client, a prompt version and a run's options."""

    def __init__(self, *, client: Client, prompts: PromptSet, options: GenerateOptions) -> None:
        self.client = client
        self.prompts = prompts
        self.options = options

    async def _ask(self, role: str, prompt: str, step: str, priority: int, **values: str) -> Completion:
        try:
            # Earlier problems first, so candidates are written steadily (see PrioritySlots).
            return await self.client.complete(role, self.prompts.render(prompt, **values), priority=priority)
        except LLMCallFailed as exc:
            raise ItemFailed(step, exc) from exc

    async def extract(self, problem: ProblemInput) -> tuple[list[str], dict[str, Any]]:
        """Step 1a: the conditions (raises Unparseable when none can be read)."""
        completion = await self._ask(EXTRACT, "extract", "extract", problem.id, original_math_question=problem.question)
        record = completion.record()
        try:
            found = parsing.conditions(completion.content, limit=self.options.max_conditions)
        except parsing.ParseError as exc:
            raise Unparseable("extract", exc, record) from exc
        return found, {**record, "conditions": found}

    async def candidate(self, problem: ProblemInput, k: int, condition: str, kind: str,
                        extraction: dict[str, Any]) -> Draft:
        """Step 1b (rewrite) and, if asked, Step 2 for one condition and rewrite type; without Step 2 a
        readable rewrite stays `unverified` (it has not passed Step 2, so it is not offered for labelling)."""
        draft = Draft(problem=problem, rewrite_type=kind, k=k, condition=condition)
        draft.outputs["extraction"] = extraction
        await self.rewrite(draft)
        if draft.status != CandidateStatus.filtered:
            if 2 in self.options.steps:
                await self.verify(draft)
            else:
                draft.status = CandidateStatus.unverified
        return draft

    async def rewrite(self, draft: Draft) -> None:
        """Step 1b: the rewritten question (filtered when it cannot be read) and M_R's analysis."""
        problem = draft.problem
        completion = await self._ask(
            REWRITE, f"rewrite_{draft.rewrite_type}", "rewrite", problem.id, original_math_question=problem.question,
            original_answer=answer_text(problem.ground_truth), extracted_condition=draft.condition or "",
        )
        rewrite = draft.outputs["rewrite"] = completion.record()
        try:
            rewrite["analysis"] = parsing.find(completion.content, parsing.ANALYSIS)
        except parsing.ParseError:
            rewrite["analysis"] = None  # the analysis is for people; the question is what matters
        try:
            draft.rewritten_question = parsing.find(completion.content, parsing.REWRITTEN_QUESTION)
        except parsing.ParseError as exc:
            draft.unparseable("rewrite", exc)
            draft.filter(REWRITE_UNREADABLE)

    async def verify(self, draft: Draft) -> None:
        """Step 2: one key condition changed, the others kept (M_I, which is not shown the extracted condition)
        and unsolvable (M_R); then the rewritten condition and the reason. Passing both makes it `pending`."""
        kind, problem = draft.rewrite_type, draft.problem
        values = {
            "original_math_question": problem.question, "original_answer": answer_text(problem.ground_truth),
            "rewritten_math_question": draft.rewritten_question,
        }
        verified, unsolvable = await asyncio.gather(
            self._ask(EXTRACT, f"verify_{kind}", "verify", problem.id, **values),
            self._ask(REWRITE, f"unsolvable_{kind}", "unsolvable", problem.id, **values),
        )
        changed = _read_verification(draft, verified)
        analysis = _read_unsolvable(draft, unsolvable)
        if not (changed is True and analysis["verdict"] is True):
            draft.filter(*_failed_checks(changed, analysis["verdict"]))
            return
        draft.status = CandidateStatus.pending
        condition, reason = await asyncio.gather(
            self._ask(EXTRACT, f"condition_{kind}", "condition", problem.id, **values),
            self._ask(REWRITE, f"reason_{kind}", "reason", problem.id, **values,
                      analysis=analysis["analysis"] or unsolvable.content.strip()),
        )
        _read_condition_and_reason(draft, condition, reason)


def _failed_checks(changed: bool | None, unsolvable: bool | None) -> list[str]:
    """Why Step 2 filters a candidate: each check that did not say yes."""
    reasons = []
    if changed is not True:
        reasons.append(NOT_ONE_CONDITION if changed is False else VERIFICATION_UNREADABLE)
    if unsolvable is not True:
        reasons.append(STILL_SOLVABLE if unsolvable is False else UNSOLVABLE_UNREADABLE)
    return reasons


def _read_verification(draft: Draft, verified: Completion) -> bool | None:
    """M_I's verdict: did the rewrite remove (contradict) some key condition and keep the others unchanged?"""
    checks = draft.outputs["verification"] = verified.record()
    try:
        checks["verdict"] = parsing.judgement(verified.content)
    except parsing.ParseError as exc:
        checks["verdict"] = None
        draft.unparseable("verify", exc)
    return checks["verdict"]


def _read_unsolvable(draft: Draft, unsolvable: Completion) -> dict[str, Any]:
    """M_R's analysis and verdict: is the rewritten question unsolvable?"""
    analysis = draft.outputs["unsolvable"] = unsolvable.record()
    try:
        analysis["analysis"] = parsing.find(unsolvable.content, parsing.UNSOLVABLE_ANALYSIS)
    except parsing.ParseError:
        analysis["analysis"] = None
    try:
        analysis["verdict"] = parsing.judgement(unsolvable.content)
    except parsing.ParseError as exc:
        analysis["verdict"] = None
        draft.unparseable("unsolvable", exc)
    return analysis


def _read_condition_and_reason(draft: Draft, condition: Completion, reason: Completion) -> None:
    draft.outputs["rewritten_condition"] = condition.record()
    draft.outputs["unsolvable_reason"] = reason.record()
    try:
        draft.rewritten_condition = parsing.find(condition.content, parsing.REWRITTEN_CONDITION,
                                                 whole_if_headerless=True)
    except parsing.ParseError as exc:
        draft.unparseable("condition", exc)
    try:
        draft.unsolvable_reason = parsing.find(reason.content, parsing.UNSOLVABLE_REASON, whole_if_headerless=True)
    except parsing.ParseError as exc:
        draft.unparseable("reason", exc)
