"""ReliableMath construction Steps 1-2 over the problems in the database.

Step 1 (question rewriting): the extract model M_I lists 1-3 necessary conditions of a problem; for each
condition k the rewrite model M_R rewrites the problem once by **removing** it and once by adding a
**contradiction**, with an analysis. Step 2 (model verification): M_I judges whether exactly that condition
was changed and M_R whether the result is unsolvable (analysis + True/False); a candidate passing both gets
its `rewritten_condition` (M_I) and `unsolvable_reason` (M_R); the others are kept with status `filtered`.

Every candidate is its own chain of requests, so a problem's 2k chains run side by side and the endpoint,
not the pipeline, is the limit. A problem's candidates are written together once all its chains have
finished; requests already answered are in the call cache, so a killed or cancelled run that is started
again repeats none of them.

A candidate's `provenance` says which run wrote its current content (`run_id`) and carries
`content_sha256`, a hash of everything the pipeline wrote but that run id. A run whose result for a
candidate hashes the same leaves the row alone, so a re-run that changes nothing writes nothing but its
run row (and `provenance.run_id` keeps naming the run that produced the content).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, bindparam, select, update
from sqlmodel import Session

from annotator.db import read_session, write_session
from annotator.llm import CallStats, Completion, Database, LLMCallFailed, LLMClient, RoleConfig, insert_ignore
from annotator.models import Candidate, CandidateStatus, GenerationRun, Problem, utcnow
from annotator.pipeline import parsing
from annotator.pipeline.prompts import DEFAULT_VERSION, REWRITE_TYPES, PromptSet, load_prompts

GENERATOR = "reliablemath-pipeline"
EXTRACT, REWRITE = "extract", "rewrite"  # the roles: M_I and M_R
MAX_STORED_ERRORS = 200
ACTIVE_STATUSES = ("queued", "running")


class RunError(ValueError):
    """A run cannot start: unknown run, bad options, nothing to do."""


@dataclass(frozen=True)
class GenerateOptions:
    """What a run does. Stored on its `GenerationRun` row, so a background process can pick it up."""

    extract: RoleConfig
    rewrite: RoleConfig
    source: str | None = None
    limit: int | None = None
    concurrency: int = 8
    steps: tuple[int, ...] = (1, 2)
    prompt_version: str = DEFAULT_VERSION
    rewrite_types: tuple[str, ...] = REWRITE_TYPES
    max_retries: int = 5
    backoff_base: float = 1.0

    def __post_init__(self) -> None:
        if not self.steps or set(self.steps) - {1, 2}:
            raise RunError(f"steps must be 1, 2 or 1,2; got {','.join(map(str, self.steps))}")
        if unknown := set(self.rewrite_types) - set(REWRITE_TYPES):
            raise RunError(f"unknown rewrite type(s) {', '.join(sorted(unknown))}")
        if self.concurrency < 1:
            raise RunError("concurrency must be at least 1")
        if self.limit is not None and self.limit < 0:
            raise RunError("limit must not be negative")

    def settings(self) -> dict[str, Any]:
        return {
            "source": self.source, "limit": self.limit, "concurrency": self.concurrency,
            "rewrite_types": list(self.rewrite_types), "max_retries": self.max_retries,
            "backoff_base": self.backoff_base,
        }

    @classmethod
    def from_run(cls, run: GenerationRun) -> GenerateOptions:
        models, settings = run.models or {}, run.options or {}
        return cls(
            extract=RoleConfig(**models[EXTRACT]), rewrite=RoleConfig(**models[REWRITE]),
            steps=tuple(int(s) for s in run.steps.split(",")), prompt_version=run.prompt_version,
            source=settings.get("source"), limit=settings.get("limit"),
            concurrency=settings.get("concurrency", 8),
            rewrite_types=tuple(settings.get("rewrite_types") or REWRITE_TYPES),
            max_retries=settings.get("max_retries", 5), backoff_base=settings.get("backoff_base", 1.0),
        )


@dataclass
class RunSummary:
    run_id: int
    status: str
    problems: int = 0
    problems_done: int = 0
    candidates_written: int = 0  # inserted or changed
    candidates_unchanged: int = 0  # produced again exactly as stored, so not written
    candidates_filtered: int = 0  # of the candidates produced (written or unchanged)
    candidates_skipped: int = 0  # existing candidates left alone: labelled, or not made by the pipeline
    failures: int = 0
    unparseable: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    retry_reasons: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    errors: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        calls = self.calls
        return (
            f"run {self.run_id}: {self.status}; {self.problems_done}/{self.problems} problems, "
            f"{self.candidates_written} candidates written, {self.candidates_unchanged} unchanged "
            f"({self.candidates_filtered} filtered, "
            f"{self.candidates_skipped} existing skipped)\n"
            f"requests {calls.get('requests', 0)} (retries {calls.get('retries', 0)}), "
            f"cache hits {calls.get('cache_hits', 0)}, failures {self.failures}, unparseable {self.unparseable}, "
            f"tokens {calls.get('prompt_tokens', 0)} in / {calls.get('completion_tokens', 0)} out, "
            f"wall time {self.seconds:.1f}s"
            + "".join(f"\n  retried {count}x: {reason}" for reason, count in self.retry_reasons.items())
        )


@dataclass(frozen=True)
class ProblemInput:
    id: int
    data_source: str
    position: int
    question: str
    ground_truth: Any


@dataclass
class Draft:
    """A candidate in the making, with everything the models said about it."""

    problem: ProblemInput
    rewrite_type: str
    k: int
    condition: str | None
    rewritten_question: str = ""
    rewritten_condition: str | None = None
    unsolvable_reason: str | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    status: str = CandidateStatus.pending

    @property
    def data_id(self) -> str:
        return f"{self.problem.data_source}_{self.problem.position}_{self.rewrite_type}_{self.k}"

    def unparseable(self, step: str, error: parsing.ParseError) -> None:
        self.outputs.setdefault("parse_errors", []).append({"step": step, "error": str(error)})


class ItemFailed(Exception):
    def __init__(self, step: str, error: LLMCallFailed) -> None:
        super().__init__(f"{step}: {error}")
        self.step = step
        self.error = error


def answer_text(ground_truth: Any) -> str:
    """The original answer as the prompts show it: 142.0 -> "142", ["9.6\\n"] -> "9.6"."""
    if isinstance(ground_truth, float) and ground_truth.is_integer():
        return str(int(ground_truth))
    if isinstance(ground_truth, list):
        return ", ".join(answer_text(item) for item in ground_truth)
    return str(ground_truth).strip() if ground_truth is not None else ""


# --- runs -------------------------------------------------------------------------------------------------

def create_run(session: Session, *, options: GenerateOptions, created_by: str | None = None) -> GenerationRun:
    """A queued run with its options; nothing is sent until `execute_run` picks it up."""
    prompts = load_prompts(options.prompt_version)
    run = GenerationRun(
        status="queued", steps=",".join(map(str, sorted(options.steps))), prompt_version=prompts.version,
        models={EXTRACT: options.extract.public(), REWRITE: options.rewrite.public()},
        options={**options.settings(), "prompt_sha256": prompts.sha256}, created_by=created_by,
    )
    session.add(run)
    session.flush()
    return run


def request_cancel(session: Session, *, run_id: int) -> bool:
    """Ask a queued or running run to stop; it finishes its open transaction and marks itself cancelled."""
    result = session.execute(
        update(GenerationRun).where(GenerationRun.id == run_id, GenerationRun.status.in_(ACTIVE_STATUSES))
        .values(cancel_requested=True)
    )
    return bool(result.rowcount)


def _select_problems(session: Session, options: GenerateOptions) -> list[ProblemInput]:
    query = select(Problem.id, Problem.data_source, Problem.position, Problem.question, Problem.ground_truth)
    if options.source:
        query = query.where(Problem.data_source == options.source)
    query = query.order_by(Problem.id)
    if options.limit is not None:
        query = query.limit(options.limit)
    return [ProblemInput(**row._asdict()) for row in session.execute(query)]


def _is_ours(candidate: Candidate) -> bool:
    return (candidate.provenance or {}).get("generator") == GENERATOR


# --- the pipeline -----------------------------------------------------------------------------------------

class Pipeline:
    def __init__(self, *, client: LLMClient, prompts: PromptSet, options: GenerateOptions,
                 protected: frozenset[str] = frozenset()):
        self.client = client
        self.prompts = prompts
        self.options = options
        self.protected = protected  # data_ids of candidates the run must not touch: labelled or imported

    async def _ask(self, role: str, prompt: str, step: str, priority: int, **values: str) -> Completion:
        try:
            # Earlier problems first, so candidates are written steadily (see PrioritySlots).
            return await self.client.complete(role, self.prompts.render(prompt, **values), priority=priority)
        except LLMCallFailed as exc:
            raise ItemFailed(step, exc) from exc

    async def extract(self, problem: ProblemInput) -> tuple[list[str], dict[str, Any]]:
        """Step 1a: the conditions (raises ParseError when none can be read)."""
        completion = await self._ask(EXTRACT, "extract", "extract", problem.id, original_math_question=problem.question)
        record = completion.record()
        try:
            found = parsing.conditions(completion.content)
        except parsing.ParseError as exc:
            raise _Unparseable("extract", exc, record) from exc
        return found, {**record, "conditions": found}

    async def candidate(self, problem: ProblemInput, k: int, condition: str, kind: str,
                        extraction: dict[str, Any]) -> Draft:
        """Step 1b (rewrite) and, if asked, Step 2 for one condition and rewrite type."""
        draft = Draft(problem=problem, rewrite_type=kind, k=k, condition=condition)
        draft.outputs["extraction"] = extraction
        completion = await self._ask(
            REWRITE, f"rewrite_{kind}", "rewrite", problem.id, original_math_question=problem.question,
            original_answer=answer_text(problem.ground_truth), extracted_condition=condition,
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
            draft.status = CandidateStatus.filtered
            return draft
        if 2 in self.options.steps:
            await self.verify(draft)
        return draft

    async def verify(self, draft: Draft) -> None:
        """Step 2: changed-exactly-that-condition (M_I) and unsolvable (M_R); then condition and reason."""
        kind, problem = draft.rewrite_type, draft.problem
        values = {
            "original_math_question": problem.question, "original_answer": answer_text(problem.ground_truth),
            "rewritten_math_question": draft.rewritten_question,
        }
        verified, unsolvable = await asyncio.gather(
            self._ask(EXTRACT, f"verify_{kind}", "verify", problem.id, **values),
            self._ask(REWRITE, f"unsolvable_{kind}", "unsolvable", problem.id, **values),
        )
        checks = draft.outputs["verification"] = verified.record()
        try:
            checks["verdict"] = parsing.judgement(verified.content)
        except parsing.ParseError as exc:
            checks["verdict"] = None
            draft.unparseable("verify", exc)
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
        if not (checks["verdict"] is True and analysis["verdict"] is True):
            draft.status = CandidateStatus.filtered
            return
        condition, reason = await asyncio.gather(
            self._ask(EXTRACT, f"condition_{kind}", "condition", problem.id, **values),
            self._ask(REWRITE, f"reason_{kind}", "reason", problem.id, **values,
                      analysis=analysis["analysis"] or unsolvable.content.strip()),
        )
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


class _Unparseable(Exception):
    def __init__(self, step: str, error: parsing.ParseError, record: dict[str, Any]) -> None:
        super().__init__(f"{step}: {error}")
        self.step = step
        self.record = record


class _Progress:
    """The run's counters, kept in memory and written with each batch of results."""

    def __init__(self, run_id: int, total: int, stats: CallStats) -> None:
        self.run_id = run_id
        self.total = total
        self.stats = stats
        self.problems_done = 0
        self.written = 0  # (database thread)
        self.unchanged = 0
        self.filtered = 0
        self.skipped = 0  # existing candidates the run must not touch (event loop)
        self.failures = 0
        self.unparseable_problems = 0
        self.unparseable_answers = 0
        self.errors: list[dict[str, Any]] = []
        self.errors_dirty = False

    @property
    def unparseable(self) -> int:
        return self.unparseable_problems + self.unparseable_answers

    def error(self, entry: dict[str, Any]) -> None:
        if len(self.errors) < MAX_STORED_ERRORS:
            self.errors.append(entry)
            self.errors_dirty = True

    def values(self) -> dict[str, Any]:
        calls = self.stats.as_dict()
        values: dict[str, Any] = {
            "problems_done": self.problems_done, "candidates_written": self.written,
            "candidates_filtered": self.filtered, "failures": self.failures, "unparseable": self.unparseable,
            "requests": calls["requests"], "cache_hits": calls["cache_hits"], "retries": calls["retries"],
            "prompt_tokens": calls["prompt_tokens"], "completion_tokens": calls["completion_tokens"],
            "heartbeat_at": utcnow(),
        }
        if self.errors_dirty:
            values["errors"] = list(self.errors)
            self.errors_dirty = False
        return values

    def save(self, session: Session, **extra: Any) -> bool:
        """Write the counters; returns whether someone asked the run to stop."""
        session.execute(update(GenerationRun).where(GenerationRun.id == self.run_id).values(**self.values(), **extra))
        return bool(session.execute(
            select(GenerationRun.cancel_requested).where(GenerationRun.id == self.run_id)
        ).scalar_one())


def _fingerprint(draft: Draft, provenance_json: str) -> str:
    """SHA-256 over what the pipeline writes for `draft` (its provenance without the run id included)."""
    payload = json.dumps(
        [provenance_json, draft.rewrite_type, draft.k, draft.condition, draft.rewritten_question,
         draft.rewritten_condition, draft.unsolvable_reason, draft.problem.question, draft.problem.ground_truth,
         draft.outputs, str(draft.status)],
        ensure_ascii=False, sort_keys=True, separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _store(
    session: Session, drafts: Sequence[tuple[Draft, str]], provenance: dict[str, Any], progress: _Progress,
    ours: dict[str, str | None],
) -> None:
    """Insert or refresh changed candidates of one problem: (draft, content_sha256) pairs.

    `ours` holds the data_ids the pipeline wrote before. Core statements (one executemany each) rather than
    ORM objects. A candidate that got a label meanwhile is not overwritten.
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
        if draft.data_id in ours:
            updates.append({"b_data_id": draft.data_id, **values})
        else:
            new_rows.append({
                **values, "problem_id": draft.problem.id, "data_id": draft.data_id,
                "data_source": draft.problem.data_source, "label_count": 0, "created_at": now,
            })
        progress.written += 1
    table = Candidate.__table__  # type: ignore[attr-defined]
    insert_ignore(session, table, new_rows)
    if updates:
        session.execute(
            update(table).where(table.c.data_id == bindparam("b_data_id"), table.c.label_count == 0), updates
        )


async def execute_run(
    engine: Engine,
    *,
    run_id: int,
    progress_callback: Callable[[int, int, CallStats], None] | None = None,
    poll_seconds: float = 1.0,
) -> RunSummary:
    """Run a queued `GenerationRun` to the end (or until it is cancelled) and return its summary."""
    started = time.perf_counter()
    # Database work runs on its own thread; with the default 5 ms GIL switch interval every hand-off to it
    # can stall that long, which is most of a cached re-run's time. Shorter slices while the run lasts.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(min(switch_interval, 0.0005))
    try:
        return await _execute_run(engine, run_id=run_id, progress_callback=progress_callback,
                                  poll_seconds=poll_seconds, started=started)
    finally:
        sys.setswitchinterval(switch_interval)


async def _execute_run(
    engine: Engine,
    *,
    run_id: int,
    progress_callback: Callable[[int, int, CallStats], None] | None,
    poll_seconds: float,
    started: float,
) -> RunSummary:
    with write_session(engine) as session:
        run = session.get(GenerationRun, run_id)
        if run is None:
            raise RunError(f"no generation run {run_id}")
        if run.status != "queued":
            raise RunError(f"run {run_id} is {run.status}; only a queued run can be started")
        options = GenerateOptions.from_run(run)
        prompts = load_prompts(options.prompt_version)
        if 1 in options.steps:
            problems = _select_problems(session, options)
        else:
            problems = []
        run.status, run.pid, run.started_at, run.heartbeat_at = "running", os.getpid(), utcnow(), utcnow()
        cancelled_before_start = run.cancel_requested
    drafts_by_problem: dict[int, list[Draft]] = {}
    if 1 not in options.steps:
        problems, drafts_by_problem = _candidates_to_verify(engine, options)
    with write_session(engine) as session:
        session.execute(update(GenerationRun).where(GenerationRun.id == run_id).values(problems_total=len(problems)))

    provenance = {
        "generator": GENERATOR, "run_id": run_id, "prompt_version": prompts.version,
        "prompt_sha256": prompts.sha256, "steps": list(options.steps),
        "models": {EXTRACT: options.extract.public(), REWRITE: options.rewrite.public()},
    }
    db = Database(engine)
    stats = CallStats()
    progress = _Progress(run_id, len(problems), stats)
    status, message = "running", None
    try:
        client = LLMClient(
            db=db, roles={EXTRACT: options.extract, REWRITE: options.rewrite}, concurrency=options.concurrency,
            max_retries=options.max_retries, backoff_base=options.backoff_base, run_id=run_id, stats=stats,
        )
    except Exception as exc:
        db.close()
        _finish(engine, progress, "failed", str(exc), started)
        raise
    protected, ours = _existing(engine, options)
    provenance_json = json.dumps({k: v for k, v in provenance.items() if k != "run_id"}, sort_keys=True)
    pipeline = Pipeline(client=client, prompts=prompts, options=options, protected=protected)

    async def one_problem(problem: ProblemInput) -> None:
        drafts: list[Draft] = []
        try:
            if 1 in options.steps:
                conditions, extraction = await pipeline.extract(problem)
                jobs = []
                for k, condition in enumerate(conditions, 1):
                    for kind in options.rewrite_types:
                        if f"{problem.data_source}_{problem.position}_{kind}_{k}" in pipeline.protected:
                            progress.skipped += 1  # don't pay for a candidate we would not write
                        else:
                            jobs.append(pipeline.candidate(problem, k, condition, kind, extraction))
            else:
                jobs = [_verified(pipeline, draft) for draft in drafts_by_problem[problem.id]]
            results = await asyncio.gather(*jobs, return_exceptions=True)
        except ItemFailed as exc:
            progress.failures += 1
            progress.error({"problem_id": problem.id, "data_source": problem.data_source,
                            "position": problem.position, "step": exc.step, "kind": exc.error.kind,
                            "error": str(exc.error)})
            results = []
        except _Unparseable as exc:
            progress.unparseable_problems += 1
            progress.error({"problem_id": problem.id, "data_source": problem.data_source, "position": problem.position,
                            "step": exc.step, "kind": "unparseable", "error": str(exc),
                            "response": exc.record.get("content", "")[:2000]})
            results = []
        for result in results:
            if isinstance(result, ItemFailed):
                progress.failures += 1
                progress.error({"problem_id": problem.id, "data_source": problem.data_source,
                                "position": problem.position, "step": result.step, "kind": result.error.kind,
                                "error": str(result.error)})
            elif isinstance(result, BaseException):
                raise result
            else:
                drafts.append(result)
        changed: list[tuple[Draft, str]] = []
        for draft in drafts:
            progress.filtered += draft.status == CandidateStatus.filtered
            progress.unparseable_answers += len(draft.outputs.get("parse_errors", []))
            digest = _fingerprint(draft, provenance_json)
            if ours.get(draft.data_id, "") == digest:
                progress.unchanged += 1  # produced again exactly as stored: nothing to write
            else:
                changed.append((draft, digest))
        if changed:  # one transaction for the problem's candidates, committed before the problem counts as done
            await db.write(lambda session: _store(session, changed, provenance, progress, ours))
            ours.update((draft.data_id, digest) for draft, digest in changed)
        progress.problems_done += 1
        if progress_callback is not None:
            progress_callback(progress.problems_done, progress.total, stats)

    queue: asyncio.Queue[ProblemInput] = asyncio.Queue()
    for problem in problems:
        queue.put_nowait(problem)

    async def worker() -> None:
        while True:
            try:
                problem = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await one_problem(problem)

    async def watch(tasks: list[asyncio.Task[None]]) -> None:
        while True:
            await asyncio.sleep(poll_seconds)
            if await db.write(progress.save):
                for task in tasks:
                    task.cancel()
                return

    # Enough problems in flight to keep `concurrency` requests busy even while some wait on earlier steps.
    workers = [asyncio.create_task(worker()) for _ in range(max(2, options.concurrency * 2))]
    watcher = asyncio.create_task(watch(workers))
    try:
        if cancelled_before_start:
            for task in workers:
                task.cancel()
        outcomes = await asyncio.gather(*workers, return_exceptions=True)
        crashed = [o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, asyncio.CancelledError)]
        if crashed:
            status, message = "failed", f"{type(crashed[0]).__name__}: {crashed[0]}"
        elif any(isinstance(o, asyncio.CancelledError) for o in outcomes) or cancelled_before_start:
            status, message = "cancelled", "cancelled on request"
        else:
            status = "partial" if progress.failures else "succeeded"
    except BaseException as exc:  # KeyboardInterrupt / SystemExit in the CLI: record, then re-raise
        interrupted = isinstance(exc, KeyboardInterrupt | asyncio.CancelledError)
        status, message = "cancelled" if interrupted else "failed", repr(exc)
        raise
    finally:
        watcher.cancel()
        for task in workers:
            task.cancel()
        await asyncio.gather(watcher, *workers, return_exceptions=True)
        await client.aclose()
        db.close()
        summary = _finish(engine, progress, status, message, started)
    return summary


def _existing(engine: Engine, options: GenerateOptions) -> tuple[frozenset[str], dict[str, str | None]]:
    """data_ids the run must leave alone (labelled, or not made by the pipeline), and those it may refresh.

    The latter with their `content_sha256` (None for candidates written before it was kept).
    """
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
            provenance = row.provenance or {}
            if row.label_count == 0 and provenance.get("generator") == GENERATOR:
                ours[row.data_id] = provenance.get("content_sha256")
            else:
                protected.add(row.data_id)
        return frozenset(protected), ours


async def _verified(pipeline: Pipeline, draft: Draft) -> Draft:
    await pipeline.verify(draft)
    return draft


def _candidates_to_verify(
    engine: Engine, options: GenerateOptions
) -> tuple[list[ProblemInput], dict[int, list[Draft]]]:
    """For `--steps 2`: unlabelled pipeline candidates not verified yet, grouped by problem."""
    with read_session(engine) as session:
        problems = {p.id: p for p in _select_problems(session, options)}
        query = select(Candidate).where(
            Candidate.problem_id.in_(list(problems)), Candidate.label_count == 0,
            Candidate.rewrite_type.in_(list(options.rewrite_types)), Candidate.rewritten_question != "",
        ).order_by(Candidate.id)
        drafts: dict[int, list[Draft]] = {}
        for candidate in session.execute(query).scalars():
            if not _is_ours(candidate) or "verification" in (candidate.llm_outputs or {}):
                continue
            drafts.setdefault(candidate.problem_id, []).append(Draft(
                problem=problems[candidate.problem_id], rewrite_type=candidate.rewrite_type,
                k=candidate.condition_index or 1, condition=candidate.extracted_condition,
                rewritten_question=candidate.rewritten_question, outputs=dict(candidate.llm_outputs or {}),
            ))
    return [problems[pid] for pid in drafts], drafts


def _finish(engine: Engine, progress: _Progress, status: str, message: str | None, started: float) -> RunSummary:
    progress.errors_dirty = True
    with write_session(engine) as session:
        progress.save(session, status=status, message=message, finished_at=utcnow())
    return RunSummary(
        run_id=progress.run_id, status=status, problems=progress.total, problems_done=progress.problems_done,
        candidates_written=progress.written, candidates_unchanged=progress.unchanged,
        candidates_filtered=progress.filtered,
        candidates_skipped=progress.skipped, failures=progress.failures,
        unparseable=progress.unparseable,
        calls=progress.stats.as_dict(), retry_reasons=dict(progress.stats.retry_reasons),
        seconds=time.perf_counter() - started, errors=list(progress.errors),
    )


def run_generation(
    engine: Engine,
    *,
    options: GenerateOptions,
    created_by: str | None = None,
    progress_callback: Callable[[int, int, CallStats], None] | None = None,
) -> RunSummary:
    """Create a run and execute it in this thread (the CLI's and the benchmark's entry point)."""
    with write_session(engine) as session:
        run_id = create_run(session, options=options, created_by=created_by).id
    assert run_id is not None
    return asyncio.run(execute_run(engine, run_id=run_id, progress_callback=progress_callback))
