"""The transcripts' tables: model responses with their verdicts, their review history, the LLM judges' verdicts;
their indexes are built over the SQL expressions of `annotator.database.light_tables` (the review queue's order, the
reviewed and several-sample partial indexes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, UniqueConstraint, literal_column, text
from sqlmodel import Field, SQLModel

from annotator.database.light_tables import QUEUE_PART, QUEUE_WITHIN, REVIEWED, SEVERAL_SAMPLES
from annotator.database.models._columns import json_column, text_column, utcnow


class Transcript(SQLModel, table=True):
    """One model response to one item of the evaluation set, with the judge's verdict and a human's.

    An item is a solvable problem (ReliableMath's A set; `candidate_id` is None and `data_id` is
    `{data_source}_{position}`) or a candidate (the U set; `data_id` is the candidate's). The effective
    verdict is `human` where a reviewer gave one, else `judge`.
    """

    id: int | None = Field(default=None, primary_key=True)
    data_id: str = Field(max_length=300, index=True)
    problem_id: int = Field(foreign_key="problem.id", index=True)
    candidate_id: int | None = Field(default=None, foreign_key="candidate.id")  # ix_transcript_candidate below
    model: str = Field(max_length=300)
    prompt: str = Field(max_length=100)  # "standard", "reliable", "treecut", or a name an import gives
    sample: int = 0
    response: str = text_column(nullable=False)
    reasoning: str | None = text_column()
    params: dict[str, Any] | None = json_column()  # temperature, max_tokens, ...
    finish_reason: str | None = Field(default=None, max_length=50)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    source: str = Field(default="evaluate", max_length=100)  # "evaluate", or the import's format
    run_id: int | None = None  # the evaluate run that collected it
    # The automatic judge (see `annotator.transcripts`): its rule, the rule's version, what it extracted.
    extracted_answer: str | None = text_column()
    judge_rule: str | None = Field(default=None, max_length=50)
    judge_version: str | None = Field(default=None, max_length=50)
    judge_class: str | None = Field(default=None, max_length=20)  # a JudgeClass
    judge: str | None = Field(default=None, max_length=1)  # a Verdict
    # True when the verdict differs from the reference rule's, or under the reference rule when another rule set's
    # does (`annotator.transcripts.judge.rule_sets.registry`); the review queue shows these first.
    differs_from_reference: bool | None = None
    # The latest human review (its history is in `transcriptevent`).
    human: str | None = Field(default=None, max_length=1)  # a Verdict
    tags: list[Any] | None = json_column()
    comment: str | None = text_column()
    reviewed_by: int | None = Field(default=None, foreign_key="annotator.id")
    reviewed_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        UniqueConstraint("data_id", "model", "prompt", "sample"),
        Index("ix_transcript_model_prompt", "model", "prompt"),
        # Covers what the report counts by: it reads this index, not the rows with their long responses.
        Index("ix_transcript_verdicts", "model", "prompt", "problem_id", "candidate_id", "judge", "human"),
        # A candidate's transcripts; also the report's read of the U items in candidate order (merged with the
        # candidates' `ix_candidate_report`, no hashing of a million rows).
        Index("ix_transcript_candidate", "candidate_id", "model", "prompt", "judge", "human"),
        Index("ix_transcript_review", literal_column(QUEUE_PART), literal_column(QUEUE_WITHIN), "id"),
        Index("ix_transcript_reviewed", "candidate_id", "problem_id", "model", "prompt", "judge", "human",
              postgresql_where=text(REVIEWED), sqlite_where=text(REVIEWED)),
        Index("ix_transcript_samples", "model", postgresql_where=text(SEVERAL_SAMPLES),
              sqlite_where=text(SEVERAL_SAMPLES)),
    )


class TranscriptEvent(SQLModel, table=True):
    """Append-only history of every review of a transcript: who, when, old value, new value."""

    id: int | None = Field(default=None, primary_key=True)
    transcript_id: int = Field(foreign_key="transcript.id", index=True)
    annotator_id: int = Field(foreign_key="annotator.id")
    action: str = Field(max_length=20)  # review / clear
    old: dict[str, Any] | None = json_column()
    new: dict[str, Any] | None = json_column()
    at: datetime = Field(default_factory=utcnow)  # a key's time, for a decision sent from the browser
    decision_id: str | None = Field(default=None, max_length=36, index=True)  # the browser's (`SentDecision`)


class Judgement(SQLModel, table=True):
    """One LLM judge's verdict on one transcript, with its one-line reason (`annotator.transcripts.judge.llm`).

    A judge is its rule ("llm"), its model and its prompt version: each judges a transcript at most once, so a run
    started again skips what it has, and the report compares every judge with the reviewers
    (`annotator.transcripts.report.judges`).
    """

    id: int | None = Field(default=None, primary_key=True)
    transcript_id: int = Field(foreign_key="transcript.id", index=True)
    rule: str = Field(max_length=50)  # "llm"
    model: str = Field(max_length=300)  # the judge's model, as its endpoint names it
    prompt_version: str = Field(max_length=50)
    verdict: str = Field(max_length=1)  # a Verdict
    reason: str | None = text_column()
    run_id: int | None = None  # the judge run that asked
    created_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        UniqueConstraint("transcript_id", "rule", "model", "prompt_version"),
        Index("ix_judgement_judge", "rule", "model", "prompt_version"),
    )
