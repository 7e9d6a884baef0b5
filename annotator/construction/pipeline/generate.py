"""A generate run from start to end: claim it, select its work, open the client, work through the problems
(Steps 1-2, see `steps`), finish. The run's life is `annotator.runs`'; this module is what a generate run
does with it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from annotator import runs
from annotator.construction.pipeline.drafts import Draft, ProblemInput
from annotator.construction.pipeline.options import EXTRACT, REWRITE, GenerateOptions
from annotator.construction.pipeline.persistence import (
    candidates_to_verify,
    existing_candidates,
    provenance,
    select_problems,
)
from annotator.construction.pipeline.progress import GenerateProgress, RunSummary
from annotator.construction.pipeline.prompts import PromptSet, load_prompts
from annotator.construction.pipeline.steps import Pipeline
from annotator.construction.pipeline.work import ProblemWork
from annotator.database.engine import write_session
from annotator.database.models import Run
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs.llm import CallStats, Database, LLMClient
from annotator.runs.spec import RunKindSpec


def create_run(session: Session, *, options: GenerateOptions, created_by: str | None = None) -> Run:
    """A queued generate run with its options; nothing is sent until `execute_run` picks it up."""
    prompts = load_prompts(options.prompt_version)
    return runs.create_run(
        session, kind=RunKind.generate, steps=options.steps_text(), prompt_version=prompts.version,
        models=options.models(), options={**options.settings(), "prompt_sha256": prompts.sha256},
        created_by=created_by,
    )


@dataclass
class _Claimed:
    """A run this process has claimed, and the work it selected."""

    run_id: int
    options: GenerateOptions
    prompts: PromptSet
    cancel_requested: bool
    problems: list[ProblemInput] = field(default_factory=list)
    to_verify: dict[int, list[Draft]] = field(default_factory=dict)


def _claim(engine: Engine, run_id: int) -> _Claimed:
    """Phase 1: mark the run running and read its options; with Step 1, select its problems at once."""
    with write_session(engine) as session:
        run = runs.claim_run(session, run_id=run_id, kind=RunKind.generate)
        options = GenerateOptions.from_run(run)
        claimed = _Claimed(run_id=run_id, options=options, prompts=load_prompts(options.prompt_version),
                           cancel_requested=run.cancel_requested)
        if 1 in options.steps:
            claimed.problems = select_problems(session, options)
            run.problems_total = len(claimed.problems)  # the page shows progress from the claim on
    return claimed


def _select_work(engine: Engine, claimed: _Claimed, progress: GenerateProgress) -> None:
    """Phase 2: for Step 2 alone, the candidates to verify; then the run's total."""
    if 1 not in claimed.options.steps:
        claimed.problems, claimed.to_verify = candidates_to_verify(engine, claimed.options)
    progress.total = len(claimed.problems)
    with write_session(engine) as session:
        progress.save(session, problems_total=progress.total)


def _open_client(db: Database, claimed: _Claimed, progress: GenerateProgress) -> LLMClient:
    """Phase 3: the run's client (one that cannot be built, e.g. without an API key, fails the run)."""
    options = claimed.options
    return LLMClient(
        db=db, roles=options.roles(), concurrency=options.concurrency, max_retries=options.max_retries,
        backoff_base=options.backoff_base, run_id=claimed.run_id, stats=progress.stats,
    )


async def _work(engine: Engine, db: Database, client: LLMClient, claimed: _Claimed, progress: GenerateProgress,
                progress_callback: Callable[[int, int, CallStats], None] | None,
                poll_seconds: float) -> tuple[RunStatus, str | None]:
    """Phase 4: every problem through the steps, `concurrency * 2` at a time; how the run ended."""
    options = claimed.options
    work = ProblemWork(
        pipeline=Pipeline(client=client, prompts=claimed.prompts, options=options), db=db, progress=progress,
        existing=existing_candidates(engine, options),
        provenance=provenance(run_id=claimed.run_id, options=options, prompts=claimed.prompts),
        to_verify=claimed.to_verify, progress_callback=progress_callback,
    )
    outcomes = await runs.work_through(
        claimed.problems, work,
        # Enough problems in flight to keep `concurrency` requests busy even while some wait on earlier steps.
        workers=max(2, options.concurrency * 2),
        heartbeat=lambda: db.write(progress.save), poll_seconds=poll_seconds, cancelled=claimed.cancel_requested,
    )
    return runs.outcome(outcomes, cancelled=claimed.cancel_requested, failures=progress.failures)


async def execute_run(
    engine: Engine,
    *,
    run_id: int,
    progress_callback: Callable[[int, int, CallStats], None] | None = None,
    poll_seconds: float = 1.0,
) -> RunSummary:
    """Run a queued generate run to the end (or until it is cancelled) and return its summary."""
    started = time.perf_counter()
    with runs.short_switch_interval():
        claimed = _claim(engine, run_id)
        progress = GenerateProgress(run_id, 0, CallStats())
        _select_work(engine, claimed, progress)
        db = Database(engine)
        status = await runs.run_to_end(
            engine, progress=progress, db=db, open_client=lambda: _open_client(db, claimed, progress),
            work=lambda client: _work(engine, db, client, claimed, progress, progress_callback, poll_seconds),
        )
        return progress.summary(status, time.perf_counter() - started)


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


def describe_run(run: Run) -> dict[str, Any]:
    """One row of the Generate page's runs table: what every run shows, with a generate run's own columns."""
    models = run.models or {}
    row = {
        **runs.describe(run, items="problems"), "candidates written": run.candidates_written,
        "candidates filtered": run.candidates_filtered,
        "M_I": (models.get(EXTRACT) or {}).get("model"), "M_R": (models.get(REWRITE) or {}).get("model"),
        "steps": run.steps,
    }
    return {name: row[name] for name in _COLUMNS}


_COLUMNS = (
    "run", "status", "problems done / total", "candidates written", "candidates filtered", runs.REQUESTS_SENT,
    runs.FROM_CACHE, runs.RETRIES, runs.FAILED, runs.UNREADABLE, runs.TOKENS, "M_I", "M_R", "prompts", "steps",
    "worker", "by", "started", "finished",
)

SPEC = RunKindSpec(
    kind=RunKind.generate, unit="problem", options=GenerateOptions, create=create_run, describe=describe_run,
    execute=execute_run,
)
