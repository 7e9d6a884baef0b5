"""How far to trust each judge: every rule's verdicts against the reviewers' on the reviewed responses.

One row per judge, in the layout of UMWP's judge evaluation (Sun et al. 2024, Table 3: each automatic judge
against human labels): the reviewed responses it was compared on, the share where it agrees with the reviewer,
Cohen's kappa (None with its reason when undefined) and the confusion matrix of judge verdict x human verdict.
The rule sets are applied afresh to the reviewed responses (a few hundred or thousand: math-verify's answers are
cached), so every rule is compared on the same responses whichever rule judged the transcripts last. Each LLM judge
(a model and a prompt version, `llm_judge`) gets a row from its stored verdicts (`judgement`), on the reviewed
responses it has judged: its `reviewed` count says how many that is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Judgement, Transcript
from annotator.database.vocabulary import Verdict
from annotator.figures.agreement.cohen import cohen
from annotator.transcripts.evaluation_set import with_items
from annotator.transcripts.judge.rules import LLM_RULE, RULES, Question, judge_response

VERDICTS = tuple(verdict.value for verdict in Verdict)


def _reviewed(session: Session, model: str | None) -> list[tuple[str, str, Question]]:
    """(response, human verdict, question) of every reviewed transcript whose item still exists."""
    query = select(Transcript.data_id, Transcript.response, Transcript.human).where(Transcript.human.is_not(None))
    if model is not None:
        query = query.where(Transcript.model == model)
    # In no order: the figures are counts, and sorting 20,000 rows with their responses spills to disk.
    rows = with_items(session, query, data_id=Transcript.data_id)
    return [(response, human, Question(item.ground_truth, item.unsolvable, item.treecut))
            for (_data_id, response, human), item in rows]


def judge_row(name: str, pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """One judge's row from its (judge verdict, human verdict) pairs."""
    pairs = list(pairs)
    confusion = {judge: dict.fromkeys(VERDICTS, 0) for judge in VERDICTS}
    for judge, human in pairs:
        confusion[judge][human] += 1
    judged = np.array([judge for judge, _ in pairs])
    human = np.array([human for _, human in pairs])
    kappa, reason = cohen(judged, human, list(VERDICTS)) if pairs else (None, "no reviewed responses")
    return {
        "judge": name,
        "reviewed": len(pairs),
        "agreement": sum(judge == human for judge, human in pairs) / len(pairs) if pairs else None,
        "kappa": kappa,
        "kappa_note": reason,
        "confusion": confusion,  # judge verdict -> human verdict -> count
    }


def llm_judge_name(model: str, prompt_version: str) -> str:
    """An LLM judge's name in the table: `llm MODEL @ VERSION`."""
    return f"{LLM_RULE} {model} @ {prompt_version}"


def _llm_rows(session: Session, model: str | None) -> list[dict[str, Any]]:
    """One row per LLM judge (model, prompt version) that judged any response (of `model`), from its stored
    verdicts on the reviewed ones."""
    judges = (
        select(Judgement.model, Judgement.prompt_version).distinct()
        .join(Transcript, Transcript.id == Judgement.transcript_id).where(Judgement.rule == LLM_RULE)
    )
    query = (
        select(Judgement.model, Judgement.prompt_version, Judgement.verdict, Transcript.human)
        .join(Transcript, Transcript.id == Judgement.transcript_id)
        .where(Judgement.rule == LLM_RULE, Transcript.human.is_not(None))
        .order_by(Transcript.id)
    )
    if model is not None:
        judges, query = judges.where(Transcript.model == model), query.where(Transcript.model == model)
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for judge_model, version, verdict, human in session.execute(query):
        pairs.setdefault((judge_model, version), []).append((verdict, human))
    found = sorted(tuple(judge) for judge in session.execute(judges))
    return [judge_row(llm_judge_name(*judge), pairs.get(judge, [])) for judge in found]


def judge_agreement(session: Session, *, model: str | None = None) -> list[dict[str, Any]]:
    """Every rule set, then every LLM judge, against the reviewers, on the reviewed responses (of `model`, if
    given); an LLM judge that has judged none of the reviewed responses has a row with `reviewed` 0."""
    reviewed = _reviewed(session, model)
    return [
        judge_row(name, ((judge_response(response, question, rule_name=name).verdict.value, human)
                         for response, human, question in reviewed))
        for name in RULES
    ] + _llm_rows(session, model)
