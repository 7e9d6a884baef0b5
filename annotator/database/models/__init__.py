"""Database tables (the transcripts' in `_transcripts`, the column types both use in `_columns`).

Names follow the users' words: a *problem* is a solvable source problem, a *candidate* is a rewritten
version of it that is meant to be unsolvable, a *label* is one annotator's `human_check` / `difficulty_eval`
on one candidate (a row of the `Annotation` table: the table keeps its first name, the code and the pages say
label). Every label change is also appended to `annotationevent`.

Values whose JSON type matters for exports (`ground_truth`, ids from source files) live in JSON columns so
that a str stays a str, a float a float and a list a list.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import Index, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from annotator.database.models._columns import JSONText, json_column, text_column, utcnow
from annotator.database.models._transcripts import Judgement, Transcript, TranscriptEvent
from annotator.database.vocabulary import CandidateStatus, LabelSource, Role, RunStatus

__all__ = ["JSONText", "Judgement", "Transcript", "TranscriptEvent", "utcnow"]


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
    options: dict[str, Any] | None = json_column()  # serialisation details, e.g. {"ensure_ascii": true}
    record_count: int = 0
    sha256: str = Field(max_length=64)
    imported_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (UniqueConstraint("format", "name"),)


class Problem(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    data_source: str = Field(max_length=100)
    # Index of the problem in its source file (`solve/{data_source}.json`); candidates' data_ids use it.
    position: int
    source_id: Any = json_column()  # the problem's id in its source file, with its JSON type
    question: str = text_column(nullable=False)
    ground_truth: Any = json_column()
    solution: str | None = text_column()
    extra: dict[str, Any] | None = json_column()
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
    extracted_condition: str | None = text_column()
    rewritten_question: str = text_column(nullable=False)
    rewritten_condition: str | None = text_column()
    unsolvable_reason: str | None = text_column()
    # The original question and answer as the candidate's source gave them. Usually equal to the problem's;
    # the ReliableMath release has candidates where they differ, and exports must reproduce them.
    question: str | None = text_column()
    ground_truth: Any = json_column()
    # Model analyses, verdicts and raw responses from the construction pipeline.
    llm_outputs: dict[str, Any] | None = json_column()
    # Models, prompt version, run id, generator parameters.
    provenance: dict[str, Any] | None = json_column()
    extra: dict[str, Any] | None = json_column()
    status: str = Field(default=CandidateStatus.pending, max_length=20)
    # Index in the source file it was imported from; exports keep that order.
    position: int | None = None
    # The resolved label over all annotations, kept in step with them in the same transaction so that
    # queues, statistics and exports never aggregate the annotation table.
    label_count: int = 0
    # Of those, the labels that came with an import or a pipeline (a system annotator's, e.g. the release's own
    # "import:reliablemath"): the project setting `imported_labels_count` says whether they fill `labels_per_candidate`.
    imported_label_count: int = 0
    human_check: int | None = None
    difficulty_eval: int | None = None
    # Where the resolved label comes from: a `LabelSource`, or None while it is unresolved.
    label_source: str | None = Field(default=None, max_length=20)
    # The share of its labels equal to the most common one (None without labels), kept with the resolved label:
    # below 1 the labels disagree (a dispute). Adjudicate reads the open disputes, lowest first, off an index.
    agreement: float | None = None
    # With adaptive overlap on (`labelling.adaptive`): its labels already settle it (the posterior of their majority
    # class reaches the threshold), so it is complete with fewer labels. Always false with adaptive overlap off.
    settled: bool = Field(default=False, sa_column_kwargs={"server_default": text("false")})
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    __table_args__ = (
        Index("ix_candidate_queue", "status", "label_count", "id"),
        Index("ix_candidate_source_type", "data_source", "rewrite_type"),
        # What the transcript report joins of every candidate: read from this index, not the wide rows.
        Index("ix_candidate_report", "id", "data_source", "rewrite_type", "difficulty_eval"),
        # Every column the Overview's counts and the label state read (`stats`, `queries.label_state`): they count
        # the candidates off this index alone, not the table with its texts.
        Index("ix_candidate_state", "data_source", "rewrite_type", "status", "label_source", "label_count",
              "human_check", "difficulty_eval", "imported_label_count"),
        # The few candidates adaptive overlap settled: counted apart from those with enough labels (`queue_progress`),
        # since "enough labels or settled" in one condition reads every candidate.
        Index("ix_candidate_settled", "status", "label_count", sqlite_where=text("settled"),
              postgresql_where=text("settled")),
        # The open disputes in Adjudicate's order (`adjudication`): lowest agreement, ties first, then by id.
        Index("ix_candidate_dispute", "agreement", text("(human_check IS NOT NULL)"), "id",
              sqlite_where=text(OPEN_DISPUTE), postgresql_where=text(OPEN_DISPUTE)),
        # Browse's search, `lower(column) LIKE '%...%'`: trigram indexes on PostgreSQL only (`pg_trgm`).
        *(Index(f"ix_candidate_{column}_trgm", text(f"lower({column}) gin_trgm_ops"), postgresql_using="gin")
                for column in ("data_id", "rewritten_question", "rewritten_condition")),
    )


class Annotation(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    # Looked up by candidate through the unique key (candidate_id, annotator_id): no index of its own to keep.
    candidate_id: int = Field(foreign_key="candidate.id")
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    human_check: int  # 1 = acceptable unsolvable problem, 0 = not acceptable
    difficulty_eval: int | None = None  # 0 simple / 1 hard; required when human_check is 1, else empty
    comment: str | None = text_column()
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
    old: dict[str, Any] | None = json_column()
    new: dict[str, Any] | None = json_column()
    at: datetime = Field(default_factory=utcnow)  # a key's time, for a decision sent from the browser
    decision_id: str | None = Field(default=None, max_length=36, index=True)  # the browser's (`SentDecision`)


class LabelDay(SQLModel, table=True):
    """A change to an annotator's labels and seconds spent on a day (the label's `created_at` date in UTC), appended
    by the database's triggers on `annotation` (migration 0026) whoever writes the labels; their sums per annotator
    and day are Team's counts (`annotator.labelling.label_days`)."""

    id: int | None = Field(default=None, primary_key=True)
    annotator_id: int
    day: date
    labels: int
    seconds: float


class SentDecision(SQLModel, table=True):
    """A decision sent from a queue page's browser, once: its id is made in the browser, so one sent twice (again
    after a lost answer, or after a reload) is recognised and answered with the same outcome."""

    id: str = Field(primary_key=True, max_length=36)
    annotator_id: int = Field(foreign_key="annotator.id")
    page: str = Field(max_length=20)  # annotate / adjudicate / review
    item_id: int  # the candidate's or the transcript's
    pressed_at: datetime  # the key's time (the browser's age of the decision, taken from the server's clock)
    received_at: datetime = Field(default_factory=utcnow)
    outcome: str = Field(max_length=300)  # "saved", "skipped", or why it was not saved


class Adjudication(SQLModel, table=True):
    """A reviewer's decision on a candidate whose labels disagree; it wins over the annotators' labels.

    Every change is also an `annotationevent` (action "adjudicate") by the reviewer.
    """

    candidate_id: int = Field(foreign_key="candidate.id", primary_key=True)
    annotator_id: int = Field(foreign_key="annotator.id")  # the reviewer
    human_check: int
    difficulty_eval: int | None = None
    comment: str | None = text_column()
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


class AuditSample(SQLModel, table=True):
    """A random sample of the vetted candidates drawn for a reviewer to re-check (`annotator.labelling.audit`): who
    drew it, when, with which seed, and how many were asked for and vetted then. The newest one is the audit."""

    id: int | None = Field(default=None, primary_key=True)
    seed: int
    size: int  # asked for
    vetted: int  # vetted candidates when it was drawn
    drawn_by: int = Field(foreign_key="annotator.id")
    drawn_at: datetime = Field(default_factory=utcnow)


class AuditItem(SQLModel, table=True):
    """A candidate in an audit sample and, once a reviewer re-checked it, whether it is truly unsolvable."""

    sample_id: int = Field(foreign_key="auditsample.id", primary_key=True)
    candidate_id: int = Field(foreign_key="candidate.id", primary_key=True)
    data_source: str = Field(max_length=100)  # its stratum when drawn
    position: int  # the order a reviewer is shown the sample in
    unsolvable: int | None = None  # 1 truly unsolvable, 0 not; None until audited
    comment: str | None = text_column()
    audited_by: int | None = Field(default=None, foreign_key="annotator.id")
    audited_at: datetime | None = None


class Setting(SQLModel, table=True):
    """Project settings, e.g. `labels_per_candidate`."""

    key: str = Field(primary_key=True, max_length=100)
    value: Any = json_column()


class SignInFailure(SQLModel, table=True):
    """Failed sign-ins of one account or one client (`key` is "account:NAME" or "client:ADDRESS"), kept in the
    database so that every app server throttles alike (`annotator.accounts.throttle`)."""

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
    """A one-time code the signed-in page posts to any app server to get its sign-in cookie
    (`annotator.accounts.sign_in_codes`): the database keeps the code's SHA-256 and the token sealed with the code,
    never either one itself."""

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
    # The Excel batch that handed it out (`annotator.labelling.batches`), or None for the browser queue: an
    # annotator holds one browser claim at a time, and any number of batch claims until their deadline.
    batch: str | None = Field(default=None, max_length=300)


class DisputeClaim(SQLModel, table=True):
    """A disputed (or audit-sample) candidate that a reviewer's browser holds ahead on Adjudicate; it expires.

    At most `browser_adjudication.REVIEWERS` reviewers hold one candidate of a queue at once (counted over the
    unexpired claims), so that a reviewer's decision rarely meets another's made meanwhile."""

    candidate_id: int = Field(foreign_key="candidate.id", primary_key=True)
    reviewer_id: int = Field(foreign_key="annotator.id", primary_key=True, index=True)
    queue: str = Field(primary_key=True, max_length=20)  # "adjudicate" (disputes) or "audit"
    expires_at: datetime


class LLMCall(SQLModel, table=True):
    """A completed LLM request, kept so that no request is ever paid for twice.

    `key` is the SHA-256 of (model, messages, parameters) (see `annotator.runs.llm.call_key`); the endpoint and
    the API key are not part of it and neither is stored.
    """

    key: str = Field(primary_key=True, max_length=64)
    model: str = Field(max_length=300)
    request: dict[str, Any] | None = json_column()  # {"messages": [...], "params": {...}}
    content: str | None = text_column()
    reasoning_content: str | None = text_column()
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
    models: dict[str, Any] | None = json_column()
    options: dict[str, Any] | None = json_column()  # source, limit, concurrency, ...
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
    counters: dict[str, Any] | None = json_column()  # what only this kind counts, e.g. candidates left unchanged
    errors: list[Any] | None = json_column()  # the first failures and unparseable answers, with their errors
    message: str | None = text_column()
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


class FigureSnapshot(SQLModel, table=True):
    """The latest figures of a slow page (Team, Report), shared by every app server (`annotator.figures.snapshots`): the
    value as JSON text with the fingerprint of the data it was computed from, and who is recomputing it now (a
    lease, renewed while the computation runs, so that one server computes while the others read)."""

    key: str = Field(primary_key=True, max_length=100)  # which figures: `annotator.figures.pages.Figures.key`
    generation: int = 0  # counts the stored computations up from 1 (0: none stored yet)
    version: str | None = text_column()  # the data's fingerprint before the computation, as JSON
    value: str | None = text_column()  # the figures as JSON (`Figures.to_json`)
    computed_at: datetime | None = None  # when the stored figures' computation started
    seconds: float | None = None  # how long it took
    lease_holder: str | None = Field(default=None, max_length=200)  # "host:pid:id" of the server recomputing
    lease_until: datetime | None = None
    error: str | None = Field(default=None, max_length=200)  # the last recomputation's failure (a type name)
