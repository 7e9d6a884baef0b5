"""What the pipeline reads and writes: the problems to work on, the candidates that exist already, and its
drafts stored as candidates.

A candidate's `provenance` says which run wrote its current content (`run_id`) and carries
`content_sha256`, a hash of everything the pipeline wrote but that run id. A run whose result for a
candidate hashes the same leaves the row alone, so a re-run that changes nothing writes nothing but its
run row (and `provenance.run_id` keeps naming the run that produced the content).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, bindparam, select, update
from sqlmodel import Session

from annotator.construction.pipeline.drafts import Draft, ProblemInput
from annotator.construction.pipeline.options import GenerateOptions
from annotator.construction.pipeline.prompts import PromptSet
from annotator.database.engine import insert_ignore, read_session
from annotator.database.models import Candidate, Problem, utcnow
from annotator.database.vocabulary import CandidateStatus

GENERATOR = "reliablemath-pipeline"


@dataclass(frozen=True)
class Existing:
    """The candidates of the run's problems that exist already, by data_id.

    `protected`: those the run must leave alone (labelled, or not made by the pipeline). `ours`: those it
    may refresh, with their `content_sha256` (None for candidates written before it was kept).
    """

    protected: frozenset[str]
    ours: dict[str, str | None]


def provenance(*, run_id: int, options: GenerateOptions, prompts: PromptSet) -> dict[str, Any]:
    """What every candidate of the run records about how it was made."""
    return {
        "generator": GENERATOR, "run_id": run_id, "prompt_version": prompts.version,
        "prompt_sha256": prompts.sha256, "steps": list(options.steps), "models": options.models(),
    }


def provenance_json(provenance: dict[str, Any]) -> str:
    """The provenance without the run id, as hashed into every `fingerprint`."""
    return json.dumps({k: v for k, v in provenance.items() if k != "run_id"}, sort_keys=True)


def fingerprint(draft: Draft, provenance_json: str) -> str:
    """SHA-256 over what the pipeline writes for `draft` (its provenance without the run id included)."""
    payload = json.dumps(
        [provenance_json, draft.rewrite_type, draft.k, draft.condition, draft.rewritten_question,
         draft.rewritten_condition, draft.unsolvable_reason, draft.problem.question, draft.problem.ground_truth,
         draft.outputs, str(draft.status)],
        ensure_ascii=False, sort_keys=True, separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def select_problems(session: Session, options: GenerateOptions) -> list[ProblemInput]:
    query = select(Problem.id, Problem.data_source, Problem.position, Problem.question, Problem.ground_truth)
    if options.source:
        query = query.where(Problem.data_source == options.source)
    query = query.order_by(Problem.id)
    if options.limit is not None:
        query = query.limit(options.limit)
    return [ProblemInput(**row._asdict()) for row in session.execute(query)]


def existing_candidates(engine: Engine, options: GenerateOptions) -> Existing:
    with read_session(engine) as session:
        problem_ids = select(Problem.id)
        if options.source:
            problem_ids = problem_ids.where(Problem.data_source == options.source)
        rows = session.execute(
            select(Candidate.data_id, Candidate.label_count, Candidate.provenance)
            .where(Candidate.problem_id.in_(problem_ids))
        )
        protected: set[str] = set()
        ours: dict[str, str | None] = {}
        for row in rows:
            made_by = row.provenance or {}
            if row.label_count == 0 and made_by.get("generator") == GENERATOR:
                ours[row.data_id] = made_by.get("content_sha256")
            else:
                protected.add(row.data_id)
        return Existing(protected=frozenset(protected), ours=ours)


def candidates_to_verify(
    engine: Engine, options: GenerateOptions
) -> tuple[list[ProblemInput], dict[int, list[Draft]]]:
    """For `--steps 2`: unlabelled pipeline candidates not verified yet, grouped by problem."""
    with read_session(engine) as session:
        problems = {p.id: p for p in select_problems(session, options)}
        query = select(Candidate).where(
            Candidate.problem_id.in_(list(problems)), Candidate.label_count == 0,
            Candidate.rewrite_type.in_(list(options.rewrite_types)), Candidate.rewritten_question != "",
        ).order_by(Candidate.id)
        drafts: dict[int, list[Draft]] = {}
        for candidate in session.execute(query).scalars():
            if (candidate.provenance or {}).get("generator") != GENERATOR:
                continue
            if "verification" in (candidate.llm_outputs or {}):
                continue
            drafts.setdefault(candidate.problem_id, []).append(Draft(
                problem=problems[candidate.problem_id], rewrite_type=candidate.rewrite_type,
                k=candidate.condition_index or 1, condition=candidate.extracted_condition,
                rewritten_question=candidate.rewritten_question, outputs=dict(candidate.llm_outputs or {}),
            ))
    return [problems[pid] for pid in drafts], drafts


def store_drafts(
    session: Session, drafts: Sequence[tuple[Draft, str]], *, provenance: dict[str, Any], ours: dict[str, str | None]
) -> int:
    """Insert or refresh one problem's changed candidates, given as (draft, content_sha256) pairs.

    `ours` holds the data_ids the pipeline wrote before. Core statements (one executemany each) rather than
    ORM objects. A candidate that got a label meanwhile is not overwritten. Returns how many were written.
    """
    now = utcnow()
    new_rows: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for draft, digest in drafts:
        values = {
            "rewrite_type": draft.rewrite_type, "condition_index": draft.k, "extracted_condition": draft.condition,
            "rewritten_question": draft.rewritten_question, "rewritten_condition": draft.rewritten_condition,
            "unsolvable_reason": draft.unsolvable_reason, "question": draft.problem.question,
            "ground_truth": draft.problem.ground_truth, "llm_outputs": draft.outputs,
            "provenance": {**provenance, "content_sha256": digest}, "status": str(draft.status), "updated_at": now,
        }
        data_id = draft.data_id
        if data_id in ours:
            updates.append({"b_data_id": data_id, **values})
        else:
            new_rows.append({
                **values, "problem_id": draft.problem.id, "data_id": data_id,
                "data_source": draft.problem.data_source, "label_count": 0, "created_at": now,
            })
    table = Candidate.__table__  # type: ignore[attr-defined]
    insert_ignore(session, table, new_rows)
    if updates:
        session.execute(
            update(table).where(table.c.data_id == bindparam("b_data_id"), table.c.label_count == 0), updates
        )
    return len(drafts)


def filtered_examples(session: Session, *, data_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The filtered candidates among `data_ids` as the Generate page opens them: the rewrite, why it was
    filtered, and what the models answered in the steps that decided it (their raw text)."""
    rows = session.execute(
        select(Candidate.data_id, Candidate.extracted_condition, Candidate.rewritten_question, Candidate.llm_outputs)
        .where(Candidate.data_id.in_(list(data_ids)), Candidate.status == CandidateStatus.filtered)
        .order_by(Candidate.id)
    )
    examples = []
    for row in rows:
        outputs = row.llm_outputs or {}
        answers = {step: (outputs.get(step) or {}).get("content") for step in ("rewrite", "verification", "unsolvable")}
        examples.append({
            "data_id": row.data_id, "filtered_because": outputs.get("filtered_because") or "reason not recorded",
            "extracted_condition": row.extracted_condition, "rewritten_question": row.rewritten_question,
            "answers": {step: text for step, text in answers.items() if text is not None},
        })
    return examples
