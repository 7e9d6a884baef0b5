"""The LLM judge: a judge run (`RunKind.judge`) asks a model to grade stored transcripts S / R / F with a
one-line reason (the prompt and the strict reading of the reply: `judge_prompt`).

A judge is the rule "llm", a model and a prompt version. Each verdict is kept with its reason in `judgement`
(one per transcript and judge), and it becomes the transcript's own judge verdict (`judge_rule` "llm",
`judge_version` naming the model and the prompt version, `judge_class` empty: an LLM judge gives no class), so
the report counts it, as it counts a rule set's after `judge --rule R`. A request that fails after its retries,
or a reply that is not a verdict, leaves the transcript's previous verdict; the run counts it (partial) and keeps
the error, and the reply, in its errors. `judge --rule R` later gives the transcripts R's verdicts again; the LLM
judges' verdicts stay in `judgement`, and the judge-vs-reviewer table (`judges`) reads them from there.

The run's life is `annotator.runs`'; its requests go through `annotator.runs.llm` (cached, retried, `concurrency`
at a time). Resuming is safe after any stop: a transcript this judge has a verdict on is skipped (and given that
verdict again, should another judge have judged it since), and an answer received but not yet stored is in the
call cache. An unreadable reply is in the cache too, so the same judge repeats it: judge again with another
prompt version (or a temperature above 0) to ask afresh.

A run over many transcripts is a job of parts (`annotator.runs.parts`): its scope, in id order, is cut into ranges
of transcript ids (`--parts`, else one per `limits.JUDGE_PART_TRANSCRIPTS`), each a part that any worker takes; the
command without `--queue` executes the parts itself, one after another (`runs.claiming.splittable`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, Select, bindparam, func, or_, select, update
from sqlmodel import Session

from annotator import runs
from annotator.database.engine import insert_ignore, write_session
from annotator.database.models import Judgement, Run, Transcript, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs.claiming import splittable
from annotator.runs.llm import CallStats, Completion, Database, LLMCallFailed, LLMClient
from annotator.runs.parts import add_parts, calls, seconds
from annotator.runs.spec import RunKindSpec
from annotator.settings import limits
from annotator.transcripts.evaluation_set import items_by_data_id
from annotator.transcripts.judge.llm_options import JUDGE, JudgeOptions
from annotator.transcripts.judge.llm_prompt import UnreadableReply, messages, parse_reply, shown_response
from annotator.transcripts.judge.rules import LLM_RULE, judge_version

REPLY_KEPT = 2_000  # characters of an unreadable reply kept in the run's errors


@dataclass(frozen=True)
class Job:
    """One transcript to judge: what the prompt needs of it and of its item."""

    rank: int
    transcript_id: int
    data_id: str
    question: str
    ground_truth: Any
    unsolvable: bool
    response: str  # already shortened to what the prompt shows


@dataclass
class JudgeRunSummary(runs.Summary):
    responses: int = 0  # transcripts this run judges (in scope, not judged before by this judge)
    done: int = 0
    judged: int = 0  # verdicts stored
    skipped: int = 0  # transcripts this judge had judged already
    unreadable: int = 0  # replies that are no verdict
    verdicts: dict[str, int] = field(default_factory=dict)

    def text(self) -> str:
        verdicts = ", ".join(f"{v} {n}" for v, n in sorted(self.verdicts.items())) or "none"
        return (
            f"run {self.run_id}: {self.status}; {self.done}/{self.responses} responses, {self.judged} verdicts "
            f"stored ({verdicts}), {self.skipped} already judged, {self.unreadable} replies unreadable\n"
            + self.requests_text(unparseable=self.unreadable)
        )

    def error_line(self, error: dict[str, Any]) -> str:
        line = f"transcript {error['transcript_id']} ({error['data_id']}): {error['error']}"
        return line + (f"; reply {error['reply'][:120]!r}" if "reply" in error else "")


class JudgeProgress(runs.RunProgress):
    """A judge run's counters: verdicts stored (per verdict), transcripts skipped, unreadable replies."""

    def __init__(self, run_id: int, total: int, stats: CallStats, *, skipped: int = 0) -> None:
        super().__init__(run_id, total, stats)
        self.skipped = skipped
        self.unreadable = 0
        self.verdicts: Counter[str] = Counter()

    @property
    def unparseable(self) -> int:
        return self.unreadable

    def kind_values(self) -> dict[str, Any]:
        return {"counters": {"judged": sum(self.verdicts.values()), "skipped": self.skipped,
                             "verdicts": dict(sorted(self.verdicts.items()))}}

    def failed(self, job: Job, exc: LLMCallFailed) -> None:
        self.failures += 1
        self.error({"transcript_id": job.transcript_id, "data_id": job.data_id, "kind": exc.kind, "error": str(exc)})

    def unreadable_reply(self, job: Job, reply: str, exc: UnreadableReply) -> None:
        self.unreadable += 1
        self.error({"transcript_id": job.transcript_id, "data_id": job.data_id, "kind": "unparseable",
                    "error": f"unreadable reply: {exc}", "reply": reply[:REPLY_KEPT]})

    def summary(self, status: RunStatus, seconds: float) -> JudgeRunSummary:
        return JudgeRunSummary(
            run_id=self.run_id, status=status, responses=self.total, done=self.done,
            judged=sum(self.verdicts.values()), skipped=self.skipped, unreadable=self.unreadable,
            verdicts=dict(self.verdicts), failures=self.failures, calls=self.stats.as_dict(),
            retry_reasons=dict(self.stats.retry_reasons), seconds=seconds, errors=list(self.errors),
        )


def create_run(session: Session, *, options: JudgeOptions, created_by: str | None = None) -> Run:
    """A queued judge run with its options, split into parts when it is big (`split`); nothing is sent until
    `execute_run` or a worker picks it up."""
    run = runs.create_run(
        session, kind=RunKind.judge, steps="-", prompt_version=options.prompt_version, models=options.models(),
        options=options.settings(), created_by=created_by,
    )
    ranges = split(session, options=options)
    if len(ranges) > 1:
        add_parts(session, run, options=[options.part(first, last).settings() for first, last, _ in ranges],
                  totals=[count for _, _, count in ranges])
    return run


def _scope(options: JudgeOptions, query: Select[Any] | None = None) -> Select[Any]:
    """The transcripts in the run's scope (`query`'s columns, else their ids), in id order, judged or not."""
    query = (select(Transcript.id) if query is None else query).order_by(Transcript.id)
    if options.only_reviewed:
        query = query.where(Transcript.human.is_not(None))
    if options.transcripts is not None:
        query = query.where(Transcript.id.between(*options.transcripts))
    return query.limit(options.limit)


def split(session: Session, *, options: JudgeOptions) -> list[tuple[int, int, int]]:
    """The parts of a run with `options`: (first id, last id, transcripts) of each, in id order; none when it is
    not worth splitting. `options.parts`, else one part per `limits.JUDGE_PART_TRANSCRIPTS`
    transcripts in scope, at most `limits.PARTS.high` and one per transcript."""
    scope = _scope(options).subquery()
    count, last = session.execute(select(func.count(), func.max(scope.c.id))).one()
    wanted = options.parts or math.ceil(count / limits.JUDGE_PART_TRANSCRIPTS)
    parts = min(wanted, int(limits.PARTS.high), count)
    if parts <= 1:
        return []
    size = math.ceil(count / parts)
    numbered = select(scope.c.id, func.row_number().over(order_by=scope.c.id).label("n")).subquery()
    starts = list(session.scalars(select(numbered.c.id).where((numbered.c.n - 1) % size == 0)
                                  .order_by(numbered.c.id)))
    ends = [following - 1 for following in starts[1:]] + [last]
    counts = [size] * (len(starts) - 1) + [count - size * (len(starts) - 1)]
    return list(zip(starts, ends, counts, strict=True))


def _judged(session: Session, options: JudgeOptions) -> dict[int, str]:
    """transcript id -> this judge's stored verdict (a part's: in its range)."""
    query = select(Judgement.transcript_id, Judgement.verdict).where(
        Judgement.rule == LLM_RULE, Judgement.model == options.model.model,
        Judgement.prompt_version == options.prompt_version,
    )
    if options.transcripts is not None:
        query = query.where(Judgement.transcript_id.between(*options.transcripts))
    return dict(session.execute(query).all())


def select_jobs(session: Session, *, options: JudgeOptions) -> tuple[list[Job], dict[int, str]]:
    """The transcripts still to judge, in id order, and this judge's stored verdicts on those in scope."""
    scope = [tuple(row) for row in session.execute(_scope(options, select(Transcript.id, Transcript.data_id)))]
    judged = _judged(session, options)
    todo = [(tid, data_id) for tid, data_id in scope if tid not in judged]
    items = items_by_data_id(session, data_ids={data_id for _, data_id in todo})
    responses = _responses(session, [tid for tid, _ in todo])
    jobs = []
    for tid, data_id in todo:
        item = items.get(data_id)
        if item is None:  # its item is gone: nothing to judge it against
            continue
        jobs.append(Job(len(jobs), tid, data_id, item.question, item.ground_truth, item.unsolvable,
                        shown_response(responses[tid])))
    return jobs, {tid: judged[tid] for tid, _ in scope if tid in judged}


def _responses(session: Session, ids: list[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        query = select(Transcript.id, Transcript.response).where(Transcript.id.in_(chunk))
        found.update(tuple(row) for row in session.execute(query))
    return found


def _set_verdicts(session: Session, verdicts: dict[int, str], version: str) -> None:
    """Make these verdicts the transcripts' own judge verdicts (those not set so already)."""
    table = Transcript.__table__
    changed = [{"_id": tid, "_verdict": verdict} for tid, verdict in verdicts.items()]
    if not changed:
        return
    statement = (
        update(table)
        .where(table.c.id == bindparam("_id"),
               or_(table.c.judge_rule.is_distinct_from(LLM_RULE), table.c.judge_version.is_distinct_from(version),
                   table.c.judge.is_distinct_from(bindparam("_verdict"))))
        .values(judge=bindparam("_verdict"), judge_rule=LLM_RULE, judge_version=version, judge_class=None)
    )
    session.connection().execute(statement, changed)


def store_verdict(session: Session, *, job: Job, options: JudgeOptions, verdict: str, reason: str,
                  run_id: int | None) -> None:
    """Keep one verdict with its reason, and make the stored one (ours, or one a concurrent run stored first) the
    transcript's judge verdict."""
    insert_ignore(session, Judgement, [{
        "transcript_id": job.transcript_id, "rule": LLM_RULE, "model": options.model.model,
        "prompt_version": options.prompt_version, "verdict": verdict, "reason": reason, "run_id": run_id,
        "created_at": utcnow(),
    }])
    stored = session.execute(select(Judgement.verdict).where(
        Judgement.transcript_id == job.transcript_id, Judgement.rule == LLM_RULE,
        Judgement.model == options.model.model, Judgement.prompt_version == options.prompt_version,
    )).scalar_one()
    _set_verdicts(session, {job.transcript_id: stored}, judge_version(options.model.model, options.prompt_version))


@dataclass
class _Judge(runs.ItemHandler):
    """Asks the judge about one transcript and keeps the verdict; failures are counted and kept, not raised."""

    client: LLMClient
    db: Database
    options: JudgeOptions
    progress: JudgeProgress

    async def __call__(self, job: Job) -> None:
        asked = messages(question=job.question, ground_truth=job.ground_truth, unsolvable=job.unsolvable,
                         response=job.response, version=self.options.prompt_version)
        try:
            completion = await self.client.complete(JUDGE, asked, priority=job.rank)
        except LLMCallFailed as exc:
            self.progress.failed(job, exc)
        else:
            await self._keep(job, completion)
        self.item_done()

    async def _keep(self, job: Job, completion: Completion) -> None:
        try:
            reading = parse_reply(completion.content)
        except UnreadableReply as exc:
            self.progress.unreadable_reply(job, completion.content, exc)
            return
        run_id = self.progress.run_id
        await self.db.write(lambda session: store_verdict(
            session, job=job, options=self.options, verdict=reading.verdict.value, reason=reading.reason,
            run_id=run_id))
        self.progress.verdicts[reading.verdict.value] += 1


def _claim(engine: Engine, run_id: int) -> tuple[JudgeOptions, bool, list[Job], JudgeProgress]:
    """Mark the run running, read its options, select its jobs (giving the skipped transcripts this judge's
    verdicts again) and write its total."""
    with write_session(engine) as session:
        run = runs.claim_run(session, run_id=run_id, kind=RunKind.judge)
        options = JudgeOptions.from_run(run)
        jobs, judged = select_jobs(session, options=options)
        _set_verdicts(session, judged, judge_version(options.model.model, options.prompt_version))
        progress = JudgeProgress(run_id, len(jobs), CallStats(), skipped=len(judged))
        progress.save(session, problems_total=len(jobs))
        return options, run.cancel_requested, jobs, progress


def summary_of(run: Run) -> JudgeRunSummary:
    """A judge run's summary from its row: a job's, the sum of its parts'."""
    counters = run.counters or {}
    return JudgeRunSummary(
        run_id=run.id or 0, status=RunStatus(run.status), responses=run.problems_total, done=run.problems_done,
        judged=counters.get("judged", 0), skipped=counters.get("skipped", 0), unreadable=run.unparseable,
        verdicts=dict(counters.get("verdicts") or {}), failures=run.failures, calls=calls(run), seconds=seconds(run),
        errors=list(run.errors or []),
    )


# Run a queued judge run (or each part of a job) to the end, or until it is cancelled: `(engine, *, run_id,
# progress_callback, poll_seconds)` -> its `JudgeRunSummary`.
execute_run = splittable(runs.request_run(_claim, _Judge), summary_of=summary_of)


def describe_run(run: Run) -> dict[str, Any]:
    """One row of a runs table of judge runs: what every run shows, with a judge run's own columns."""
    settings, counters = run.options or {}, run.counters or {}
    row = {
        **runs.describe(run, items="responses"), "verdicts stored": counters.get("judged", 0),
        "already judged": counters.get("skipped", 0),
        "judge model": ((run.models or {}).get(JUDGE) or {}).get("model"), "prompt": run.prompt_version,
        "reviewed only": bool(settings.get("only_reviewed")),
    }
    return {name: row[name] for name in _COLUMNS}


_COLUMNS = (
    "run", "status", "responses done / total", "verdicts stored", "already judged", runs.UNREADABLE,
    runs.REQUESTS_SENT, runs.FROM_CACHE, runs.RETRIES, runs.FAILED, runs.TOKENS, "judge model", "prompt",
    "reviewed only", "by", "started", "finished",
)

SPEC = RunKindSpec(
    kind=RunKind.judge, unit="response", options=JudgeOptions, create=create_run, describe=describe_run,
    execute=execute_run,
)


def run_judge(engine: Engine, *, options: JudgeOptions, created_by: str | None = None) -> JudgeRunSummary:
    """Create a judge run and execute it in this thread (the tests' way in)."""
    summary = SPEC.run_here(engine, options=options, created_by=created_by)
    assert isinstance(summary, JudgeRunSummary)
    return summary
