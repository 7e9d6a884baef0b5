"""Database tables.

Names follow the users' words: a *problem* is a solvable source problem, a *candidate* is a rewritten
version of it that is meant to be unsolvable, a *label* is one annotator's `human_check` / `difficulty_eval`
on one candidate (a row of the `Annotation` table: the table keeps its first name, the code and the pages say
label). Every label change is also appended to `annotationevent`.

Values whose JSON type matters for exports (`ground_truth`, ids from source files) live in JSON columns so
that a str stays a str, a float a float and a list a list.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, Index, Text, UniqueConstraint, literal_column, text
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

from annotator.vocabulary import CandidateStatus, LabelSource, Role, RunStatus


def utcnow() -> datetime:
    return datetime.now(UTC)


class JSONText(TypeDecorator[Any]):
    """JSON kept as text, byte for byte.

    SQLite gives a JSON column numeric affinity, which turns the stored text `142.0` into the integer 142;
    a TEXT column keeps it, so a float ground truth stays a float on every backend.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


def _json(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(JSONText, nullable=nullable))


def _text(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(Text, nullable=nullable))


class Annotator(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True, max_length=200)
    role: str = Field(default=Role.annotator, max_length=20)
    password_hash: str | None = Field(default=None, max_length=500)
    # Who the account is at the team's identity provider (OpenID Connect), set by an admin: the e-mail address
    # (kept lower-case, compared without case) or the provider's subject (`sub`, compared exactly). None: no
    # sign-in through the provider.
    oidc_email: str | None = Field(default=None, index=True, unique=True, max_length=320)
    oidc_subject: str | None = Field(default=None, index=True, unique=True, max_length=255)
    # System annotators stand for an import or a pipeline (e.g. "import:reliablemath"); they cannot sign in.
    is_system: bool = False
    is_active: bool = True
    created_at: datetime = Field(default_factory=utcnow)


class SourceFile(SQLModel, table=True):
    """A file that was imported, so exports can write it back under its own name and in its own style."""

    id: int | None = Field(default=None, primary_key=True)
    format: str = Field(max_length=50)
    name: str = Field(max_length=500)  # path relative to the imported directory, e.g. "solve/aime.json"
    kind: str = Field(max_length=50)  # what the file holds, e.g. "solve" or "unsol"
    options: dict[str, Any] | None = _json()  # serialisation details, e.g. {"ensure_ascii": true}
    record_count: int = 0
    sha256: str = Field(max_length=64)
    imported_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("format", "name"),)


class Problem(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    data_source: str = Field(max_length=100)
    # Index of the problem in its source file (`solve/{data_source}.json`); candidates' data_ids use it.
    position: int
    source_id: Any = _json()  # the problem's id in its source file, with its JSON type
    question: str = _text(nullable=False)
    ground_truth: Any = _json()
    solution: str | None = _text()
    extra: dict[str, Any] | None = _json()
    created_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("data_source", "position"),)


# A candidate whose labels disagree and no reviewer has decided: the partial index's predicate, and written the
# same, literally, into the queries that should use it (a bound parameter would keep a generic plan off it).
OPEN_DISPUTE = f"agreement < 1 AND (label_source IS NULL OR label_source <> '{LabelSource.adjudicated.value}')"


class Candidate(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    problem_id: int = Field(foreign_key="problem.id", index=True)
    data_id: str = Field(max_length=300, unique=True, index=True)
    data_source: str = Field(max_length=100)  # copied from the problem: the queue filters on it
    rewrite_type: str = Field(max_length=50)  # a RewriteType, or another name a source uses
    condition_index: int | None = None  # k in `{source}_{idx}_{type}_{k}`, counted from 1
    extracted_condition: str | None = _text()
    rewritten_question: str = _text(nullable=False)
    rewritten_condition: str | None = _text()
    unsolvable_reason: str | None = _text()
    # The original question and answer as the candidate's source gave them. Usually equal to the problem's;
    # the ReliableMath release has candidates where they differ, and exports must reproduce them.
    question: str | None = _text()
    ground_truth: Any = _json()
    # Model analyses, verdicts and raw responses from the construction pipeline.
    llm_outputs: dict[str, Any] | None = _json()
    # Models, prompt version, run id, generator parameters.
    provenance: dict[str, Any] | None = _json()
    extra: dict[str, Any] | None = _json()
    status: str = Field(default=CandidateStatus.pending, max_length=20)
    # Index in the source file it was imported from; exports keep that order.
    position: int | None = None
    # The resolved label over all annotations, kept in step with them in the same transaction so that
    # queues, statistics and exports never aggregate the annotation table.
    label_count: int = 0
    human_check: int | None = None
    difficulty_eval: int | None = None
    # Where the resolved label comes from: a `LabelSource`, or None while it is unresolved.
    label_source: str | None = Field(default=None, max_length=20)
    # The share of its labels equal to the most common one (None without labels), kept with the resolved label:
    # below 1 the labels disagree (a dispute). Adjudicate reads the open disputes, lowest first, off an index.
    agreement: float | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        Index("ix_candidate_queue", "status", "label_count", "id"),
        Index("ix_candidate_source_type", "data_source", "rewrite_type"),
        # What the transcript report joins of every candidate: read from this index, not the wide rows.
        Index("ix_candidate_report", "id", "data_source", "rewrite_type", "difficulty_eval"),
        # Every column the Overview's counts and the label state read (`stats`, `store.label_state`): they count
        # the candidates off this index alone, not the table with its texts.
        Index("ix_candidate_state", "data_source", "rewrite_type", "status", "label_source", "label_count",
              "human_check", "difficulty_eval"),
        # The open disputes in Adjudicate's order (`adjudication`): lowest agreement, ties first, then by id.
        Index("ix_candidate_dispute", "agreement", text("(human_check IS NOT NULL)"), "id",
              sqlite_where=text(OPEN_DISPUTE), postgresql_where=text(OPEN_DISPUTE)),
        # Browse's search, `lower(column) LIKE '%...%'`: trigram indexes on PostgreSQL only (`pg_trgm`).
        *(Index(f"ix_candidate_{column}_trgm", text(f"lower({column}) gin_trgm_ops"), postgresql_using="gin")
                for column in ("data_id", "rewritten_question", "rewritten_condition")),
    )


class Annotation(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int = Field(foreign_key="candidate.id", index=True)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    human_check: int  # 1 = acceptable unsolvable problem, 0 = not acceptable
    difficulty_eval: int | None = None  # 0 simple / 1 hard; required when human_check is 1, else empty
    comment: str | None = _text()
    seconds_spent: float | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("candidate_id", "annotator_id"),)


class AnnotationEvent(SQLModel, table=True):
    """Append-only history of every label change: who, when, old value, new value."""

    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int = Field(foreign_key="candidate.id", index=True)
    annotator_id: int = Field(foreign_key="annotator.id")
    action: str = Field(max_length=20)  # create / update / delete
    old: dict[str, Any] | None = _json()
    new: dict[str, Any] | None = _json()
    at: datetime = Field(default_factory=utcnow)


class Adjudication(SQLModel, table=True):
    """A reviewer's decision on a candidate whose labels disagree; it wins over the annotators' labels.

    Every change is also an `annotationevent` (action "adjudicate") by the reviewer.
    """

    candidate_id: int = Field(foreign_key="candidate.id", primary_key=True)
    annotator_id: int = Field(foreign_key="annotator.id")  # the reviewer
    human_check: int
    difficulty_eval: int | None = None
    comment: str | None = _text()
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class GoldLabel(SQLModel, table=True):
    """A candidate whose label is known (set by an admin): mixed into queues unannounced to measure each
    annotator's accuracy."""

    candidate_id: int = Field(foreign_key="candidate.id", primary_key=True)
    human_check: int
    difficulty_eval: int | None = None
    created_by: int | None = Field(default=None, foreign_key="annotator.id")
    created_at: datetime = Field(default_factory=utcnow)


class Setting(SQLModel, table=True):
    """Project settings, e.g. `labels_per_candidate`."""

    key: str = Field(primary_key=True, max_length=100)
    value: Any = _json()


class SignInFailure(SQLModel, table=True):
    """Failed sign-ins of one account or one client (`key` is "account:NAME" or "client:ADDRESS"), kept in the
    database so that every app server throttles alike (`annotator.throttle`)."""

    key: str = Field(primary_key=True, max_length=300)
    failures: int = 0
    last_failure_at: datetime = Field(default_factory=utcnow)
    blocked_until: datetime = Field(default_factory=utcnow)


class SignInSession(SQLModel, table=True):
    """A signed-in browser: the app keeps the token in a cookie, the database only its SHA-256."""

    token_hash: str = Field(primary_key=True, max_length=64)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime


class SignInCode(SQLModel, table=True):
    """A one-time code the signed-in page posts to any app server to get its sign-in cookie (`annotator.sign_in_codes`):
    the database keeps the code's SHA-256 and the token sealed with the code, never either one itself."""

    code_hash: str = Field(primary_key=True, max_length=64)
    sealed_token: str = Field(max_length=64)  # the token's bytes XOR a pad derived from the code, as hex
    max_age: int  # the cookie's lifetime in seconds
    expires_at: datetime = Field(index=True)


class CandidateClaim(SQLModel, table=True):
    """A candidate the queue has handed to an annotator and not yet labelled by them; it expires.

    The queue and the Excel batches count unexpired claims next to `label_count`, so neither hands a
    candidate to more annotators than the project's `labels_per_candidate`.
    """

    candidate_id: int = Field(foreign_key="candidate.id", primary_key=True)
    annotator_id: int = Field(foreign_key="annotator.id", primary_key=True, index=True)
    expires_at: datetime
    # The Excel batch that handed it out (`annotator.batches`), or None for the browser queue: an
    # annotator holds one browser claim at a time, and any number of batch claims until their deadline.
    batch: str | None = Field(default=None, max_length=300)


class LLMCall(SQLModel, table=True):
    """A completed LLM request, kept so that no request is ever paid for twice.

    `key` is the SHA-256 of (model, messages, parameters) (see `annotator.llm.call_key`); the endpoint and
    the API key are not part of it and neither is stored.
    """

    key: str = Field(primary_key=True, max_length=64)
    model: str = Field(max_length=300)
    request: dict[str, Any] | None = _json()  # {"messages": [...], "params": {...}}
    content: str | None = _text()
    reasoning_content: str | None = _text()
    finish_reason: str | None = Field(default=None, max_length=50)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None
    run_id: int | None = None  # the run that first made the request
    created_at: datetime = Field(default_factory=utcnow)


class Run(SQLModel, table=True):
    """One background LLM run of some `kind` (see `annotator.runs`): what it was asked, how far it got.

    Every kind has the same life (status, process, heartbeat, cancel request) and the same request
    counters; `options` and `counters` hold what only one kind has. Generate runs (ReliableMath Steps 1-2,
    the first kind) keep their candidate counts in columns of their own.
    """

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=20)  # a RunKind
    status: str = Field(default=RunStatus.queued, max_length=20)  # a RunStatus
    steps: str = Field(default="1,2", max_length=20)
    prompt_version: str = Field(max_length=50)
    # Per role (extract = M_I, rewrite = M_R): model, base URL, the NAME of the API-key variable, parameters.
    models: dict[str, Any] | None = _json()
    options: dict[str, Any] | None = _json()  # source, limit, concurrency, ...
    problems_total: int = 0  # the items the run works through
    problems_done: int = 0
    candidates_written: int = 0  # generate runs: inserted or changed
    candidates_filtered: int = 0  # generate runs: of the candidates produced, those failing verification
    requests: int = 0  # requests sent to the endpoint, retries included
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0  # items (problems or candidates) whose requests failed after all retries
    unparseable: int = 0  # answers recorded as unparseable
    prompt_tokens: int = 0
    completion_tokens: int = 0
    counters: dict[str, Any] | None = _json()  # what only this kind counts, e.g. candidates left unchanged
    errors: list[Any] | None = _json()  # the first failures and unparseable answers, with their errors
    message: str | None = _text()
    cancel_requested: bool = False
    pid: int | None = None  # the process started for it on the app's machine, until a worker claims it
    worker: str | None = Field(default=None, max_length=200)  # who holds it: "host:pid:id" (`runs.workers`)
    claimed_at: datetime | None = None  # when `worker` claimed it (a takeover claims it again)
    started_at: datetime | None = None
    heartbeat_at: datetime | None = None  # its worker's last sign of life: liveness is this alone
    finished_at: datetime | None = None
    created_by: str | None = Field(default=None, max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
    # A job split into parts (`runs.parts`): its number of parts, each a run of its own that workers claim; its
    # row is the sum of theirs. 0 for a run of one piece and for a part.
    parts: int = 0
    parent_id: int | None = Field(default=None, foreign_key="run.id", index=True)  # a part's job


class Worker(SQLModel, table=True):
    """A worker process serving queued runs (`python -m annotator worker`), alive while `heartbeat_at` is fresh;
    the app queues a run without starting a process of its own when one serves its kind."""

    id: str = Field(primary_key=True, max_length=200)  # "host:pid:id", as on the runs it claims
    kinds: str = Field(max_length=200)  # the kinds of run it takes, comma-separated
    started_at: datetime = Field(default_factory=utcnow)
    heartbeat_at: datetime = Field(default_factory=utcnow)


# The review queue's order as two SQL expressions of a transcript row, one index over them (`ix_transcript_review`),
# so that Review reads the next few transcripts of the queue from the index (`transcripts.review_order`).
# QUEUE_PART: reviewed (3) or not (0), plus the part (`review.REASONS`: rules disagree 0, judge unsure 1, sample 2).
QUEUE_PART = ("(CASE WHEN human IS NULL THEN 0 ELSE 3 END + CASE WHEN rules_disagree THEN 0 "
              "WHEN judge IS NULL OR judge_class = 'unmatched' THEN 1 ELSE 2 END)")
# A transcript's place in the sample: a fixed pseudo-random rank of its id below 2^31 - 1 (a multiplicative
# step, a square and an affine step modulo the prime 2^31 - 1: integer arithmetic every SQL database does in 64
# bits without overflow); the rule sets' disagreements and the judge's unsure cases go by id.
_STEP = "(CAST(id AS BIGINT) * 48271 % 2147483647)"
SAMPLE_RANK_MODULUS = 2147483647
SAMPLE_RANK = f"(({_STEP} * {_STEP} % 2147483647) * 16807 + {_STEP}) % 2147483647"
QUEUE_WITHIN = (f"(CASE WHEN rules_disagree THEN id WHEN judge IS NULL OR judge_class = 'unmatched' THEN id "
                f"ELSE {SAMPLE_RANK} END)")
# Reviewed transcripts are few: what the report and the tags chart read of them comes from this partial index.
REVIEWED = "human IS NOT NULL"
# Responses beyond an item's first sample: where there are none, the report counts each response as its item's.
SEVERAL_SAMPLES = "sample <> 0"
# Indexes over expressions, which Alembic cannot compare with the database's own rendering (tests/test_db.py).
EXPRESSION_INDEXES = frozenset({"ix_transcript_review"})


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
    response: str = _text(nullable=False)
    reasoning: str | None = _text()
    params: dict[str, Any] | None = _json()  # temperature, max_tokens, ...
    finish_reason: str | None = Field(default=None, max_length=50)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    source: str = Field(default="evaluate", max_length=100)  # "evaluate", or the import's format
    run_id: int | None = None  # the evaluate run that collected it
    # The automatic judge (see `annotator.transcripts`): its rule, the rule's version, what it extracted.
    extracted_answer: str | None = _text()
    judge_rule: str | None = Field(default=None, max_length=50)
    judge_version: str | None = Field(default=None, max_length=50)
    judge_class: str | None = Field(default=None, max_length=20)  # a JudgeClass
    judge: str | None = Field(default=None, max_length=1)  # a Verdict
    # True when the other rule set gives another verdict (the review queue shows these first).
    rules_disagree: bool | None = None
    # The latest human review (its history is in `transcriptevent`).
    human: str | None = Field(default=None, max_length=1)  # a Verdict
    tags: list[Any] | None = _json()
    comment: str | None = _text()
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
    old: dict[str, Any] | None = _json()
    new: dict[str, Any] | None = _json()
    at: datetime = Field(default_factory=utcnow)


class Judgement(SQLModel, table=True):
    """One LLM judge's verdict on one transcript, with its one-line reason (`annotator.transcripts.llm_judge`).

    A judge is its rule ("llm"), its model and its prompt version: each judges a transcript at most once, so a run
    started again skips what it has, and the report compares every judge with the reviewers
    (`annotator.transcripts.judges`).
    """

    id: int | None = Field(default=None, primary_key=True)
    transcript_id: int = Field(foreign_key="transcript.id", index=True)
    rule: str = Field(max_length=50)  # "llm"
    model: str = Field(max_length=300)  # the judge's model, as its endpoint names it
    prompt_version: str = Field(max_length=50)
    verdict: str = Field(max_length=1)  # a Verdict
    reason: str | None = _text()
    run_id: int | None = None  # the judge run that asked
    created_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        UniqueConstraint("transcript_id", "rule", "model", "prompt_version"),
        Index("ix_judgement_judge", "rule", "model", "prompt_version"),
    )


class FigureSnapshot(SQLModel, table=True):
    """The latest figures of a slow page (Team, Report), shared by every app server (`annotator.snapshots`): the
    value as JSON text with the fingerprint of the data it was computed from, and who is recomputing it now (a
    lease, renewed while the computation runs, so that one server computes while the others read)."""

    key: str = Field(primary_key=True, max_length=100)  # which figures: `annotator.figures.Figures.key`
    generation: int = 0  # counts the stored computations up from 1 (0: none stored yet)
    version: str | None = _text()  # the data's fingerprint before the computation, as JSON
    value: str | None = _text()  # the figures as JSON (`Figures.to_json`)
    computed_at: datetime | None = None  # when the stored figures' computation started
    seconds: float | None = None  # how long it took
    lease_holder: str | None = Field(default=None, max_length=200)  # "host:pid:id" of the server recomputing
    lease_until: datetime | None = None
    error: str | None = Field(default=None, max_length=200)  # the last recomputation's failure (a type name)
