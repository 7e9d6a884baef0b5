"""Collecting transcripts: an evaluate run (`RunKind.evaluate`) asks a model every item of the evaluation set
(ReliableMath Section 4: the A set and the U set) with the standard or the reliable prompt, and keeps each
answer as a `Transcript`.

The run's life is `annotator.runs`'; its requests go through `annotator.runs.llm`, so answers are cached, retried
and sent `concurrency` at a time. Resuming is safe after any stop, kill -9 included: an item that has a
transcript for (data_id, model, prompt, sample) is skipped, and an answer received but not yet kept as a
transcript is in the call cache, so it is not asked again.

Judging the new transcripts is not done here: `collected_ids` names them for the judge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotator import runs
from annotator.database.engine import insert_ignore, write_session
from annotator.database.models import Run, Transcript, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.import_export.import_summary import undecided_text
from annotator.runs.llm import CallStats, Completion, Database, LLMCallFailed, LLMClient
from annotator.runs.spec import RunKindSpec
from annotator.transcripts.collect.options import MODEL, EvaluateOptions, sample_role
from annotator.transcripts.collect.prompts import messages, template
from annotator.transcripts.evaluation_set import Item, Selection, evaluation_items, within_limit

SOURCE = "evaluate"  # Transcript.source of collected transcripts
ProgressCallback = Callable[[int, int, CallStats], None]


@dataclass(frozen=True)
class Job:
    """One request of a run: an item, asked once more (`sample`)."""

    rank: int  # earlier jobs get a free request slot first
    item: Item
    sample: int


@dataclass
class EvaluateSummary(runs.Summary):
    responses: int = 0  # the run's jobs (items x samples not collected before)
    done: int = 0
    written: int = 0  # transcripts stored
    skipped: int = 0  # items x samples that had a transcript already
    solvable_items: int = 0  # the items asked (or collected before), of the A set
    unsolvable_items: int = 0  # and of the U set
    pairs_undecided: int = 0  # distinct (ground truth, answer) pairs the judge found no verdict on

    def text(self) -> str:
        return (
            f"run {self.run_id}: {self.status}; {self.done}/{self.responses} responses, {self.written} transcripts "
            f"written, {self.skipped} already collected; items: {self.solvable_items} solvable, "
            f"{self.unsolvable_items} unsolvable"
            + (f"; {undecided_text(self.pairs_undecided)}" if self.pairs_undecided else "") + "\n"
            + self.requests_text()
        )

    def error_line(self, error: dict[str, Any]) -> str:
        return f"{error['data_id']} sample {error['sample']}: {error['error']}"


class EvaluateProgress(runs.RunProgress):
    """An evaluate run's counters: its items are requests (item x sample); transcripts written and skipped."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written = 0
        self.skipped = 0
        self.items = (0, 0)  # solvable, unsolvable
        self.pairs_undecided = 0  # set by the judge once the answers are in

    def kind_values(self) -> dict[str, Any]:
        return {"counters": {"transcripts_written": self.written, "transcripts_skipped": self.skipped,
                             "solvable_items": self.items[0], "unsolvable_items": self.items[1]}}

    def failed(self, job: Job, exc: LLMCallFailed) -> None:
        self.failures += 1
        self.error({"data_id": job.item.data_id, "sample": job.sample, "kind": exc.kind, "error": str(exc)})

    def summary(self, status: RunStatus, seconds: float) -> EvaluateSummary:
        return EvaluateSummary(
            run_id=self.run_id, status=status, responses=self.total, done=self.done, written=self.written,
            skipped=self.skipped, solvable_items=self.items[0], unsolvable_items=self.items[1],
            pairs_undecided=self.pairs_undecided,
            failures=self.failures, calls=self.stats.as_dict(),
            retry_reasons=dict(self.stats.retry_reasons), seconds=seconds, errors=list(self.errors),
        )


def create_run(session: Session, *, options: EvaluateOptions, created_by: str | None = None) -> Run:
    """A queued evaluate run with its options; nothing is sent until `execute_run` picks it up."""
    return runs.create_run(
        session, kind=RunKind.evaluate, steps="-", prompt_version=options.prompt, models=options.models(),
        options=options.settings(), created_by=created_by,
    )


def select_jobs(session: Session, *, options: EvaluateOptions) -> tuple[list[Job], int, Selection]:
    """The requests still to make, in item order, how many items x samples have a transcript already, and the
    items asked (`options.limit` of them in proportion, drawn with `options.seed`: `items.within_limit`)."""
    collected = {(row.data_id, row.sample) for row in session.execute(
        select(Transcript.data_id, Transcript.sample)
        .where(Transcript.model == options.model.model, Transcript.prompt == options.prompt)
    )}
    items = evaluation_items(session, data_source=options.data_source, item_set=options.item_set)
    selection = within_limit(items, limit=options.limit, seed=options.seed)
    jobs: list[Job] = []
    skipped = 0
    for item in selection.items:
        for sample in range(options.samples):
            if (item.data_id, sample) in collected:
                skipped += 1
            else:
                jobs.append(Job(len(jobs), item, sample))
    return jobs, skipped, selection


def transcript_row(job: Job, completion: Completion, *, options: EvaluateOptions, run_id: int) -> dict[str, Any]:
    """The `Transcript` row of one answer."""
    item = job.item
    return {
        "data_id": item.data_id, "problem_id": item.problem_id, "candidate_id": item.candidate_id,
        "model": options.model.model, "prompt": options.prompt, "sample": job.sample,
        "response": completion.content, "reasoning": completion.reasoning_content,
        "params": {**options.role(job.sample).params(), "template": template(treecut=item.treecut)},
        "finish_reason": completion.finish_reason, "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens, "source": SOURCE, "run_id": run_id,
        "created_at": utcnow(),
    }


@dataclass
class _Collect(runs.ItemHandler):
    """Asks one job's question and keeps the answer; failures are counted and kept on the run, not raised."""

    client: LLMClient
    db: Database
    options: EvaluateOptions
    progress: EvaluateProgress

    async def __call__(self, job: Job) -> None:
        question = messages(job.item.question, prompt=self.options.prompt, treecut=job.item.treecut)
        try:
            completion = await self.client.complete(sample_role(job.sample), question, priority=job.rank)
        except LLMCallFailed as exc:
            self.progress.failed(job, exc)
        else:
            row = transcript_row(job, completion, options=self.options, run_id=self.progress.run_id)
            # Committed before the job counts as done; a duplicate (a concurrent run) is left as it is.
            await self.db.write(lambda session: insert_ignore(session, Transcript, [row]))
            self.progress.written += 1
        self.item_done()


def _claim(engine: Engine, run_id: int) -> tuple[EvaluateOptions, bool, list[Job], EvaluateProgress]:
    """Mark the run running, read its options, select its jobs and write its total."""
    with write_session(engine) as session:
        run = runs.claim_run(session, run_id=run_id, kind=RunKind.evaluate)
        options = EvaluateOptions.from_run(run)
        cancelled = run.cancel_requested
        jobs, skipped, selection = select_jobs(session, options=options)
        progress = EvaluateProgress(run_id, len(jobs), CallStats())
        progress.skipped = skipped
        progress.items = (selection.solvable, selection.unsolvable)
        progress.save(session, problems_total=len(jobs))
    return options, cancelled, jobs, progress


def _judge_unjudged(engine: Engine, progress: EvaluateProgress) -> None:
    from annotator.transcripts.judge.verdicts import judge_transcripts

    with write_session(engine) as session:
        ids = list(session.execute(
            select(Transcript.id).where(Transcript.source == SOURCE, Transcript.judge_rule.is_(None))
        ).scalars())
    if ids:
        progress.pairs_undecided = judge_transcripts(engine, transcript_ids=ids).pairs_undecided


# Run a queued evaluate run to the end (or until it is cancelled); the judge's verdicts come with the answers
# (also for those a killed earlier run left unjudged). `(engine, *, run_id, progress_callback, poll_seconds)`.
execute_run = runs.request_run(_claim, _Collect, after=_judge_unjudged)


def run_evaluation(
    engine: Engine,
    *,
    options: EvaluateOptions,
    created_by: str | None = None,
    progress_callback: ProgressCallback | None = None,
) -> EvaluateSummary:
    """Create a run and execute it in this thread (the tests' and the benchmark's entry point)."""
    with write_session(engine) as session:
        run_id = create_run(session, options=options, created_by=created_by).id
    assert run_id is not None
    return asyncio.run(execute_run(engine, run_id=run_id, progress_callback=progress_callback))


def collected_ids(session: Session, *, run_id: int) -> list[int]:
    """The transcripts run `run_id` collected (e.g. for the judge), in id order."""
    query = select(Transcript.id).where(Transcript.run_id == run_id, Transcript.source == SOURCE)
    return list(session.execute(query.order_by(Transcript.id)).scalars())


def describe_run(run: Run) -> dict[str, Any]:
    """One row of the Evaluate page's runs table: what every run shows, with an evaluate run's own columns."""
    settings, counters = run.options or {}, run.counters or {}
    row = {
        **runs.describe(run, items="responses"), "transcripts written": counters.get("transcripts_written", 0),
        "already collected": counters.get("transcripts_skipped", 0),
        "items (solvable / unsolvable)": _items_text(counters),
        "model": ((run.models or {}).get(MODEL) or {}).get("model"), "prompt": run.prompt_version,
        "set": settings.get("item_set"), "source": settings.get("data_source") or "(all)",
        "samples": settings.get("samples"),
    }
    return {name: row[name] for name in _COLUMNS}


def _items_text(counters: dict[str, Any]) -> str | None:
    """"9 / 41": the run's solvable and unsolvable items, once it has chosen them."""
    if "solvable_items" not in counters:
        return None
    return f"{counters['solvable_items']} / {counters.get('unsolvable_items', 0)}"


_COLUMNS = (
    "run", "status", "items (solvable / unsolvable)", "responses done / total", "transcripts written",
    "already collected", runs.REQUESTS_SENT,
    runs.FROM_CACHE, runs.RETRIES, runs.FAILED, runs.TOKENS, "model", "prompt", "set", "source", "samples", "worker",
    "by", "started", "finished",
)

SPEC = RunKindSpec(
    kind=RunKind.evaluate, unit="response", options=EvaluateOptions, create=create_run, describe=describe_run,
    execute=execute_run,
)
