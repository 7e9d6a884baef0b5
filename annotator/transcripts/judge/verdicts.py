"""Judging stored transcripts and storing the verdicts: set-based, on both cores for big jobs.

`judge_transcripts` reads transcripts in windows and judges them (`annotator.transcripts.judge.rules`); each window is
written back with one executemany. Each transcript gets the rule, its version, the extracted answer, the class,
the verdict and `rules_disagree` (the other rule set gives another verdict).

Where the time goes is math-verify (parsing and sympy), and on a leaderboard final answers repeat across models,
prompts and samples. So a job first collects the distinct (gold, answer) pairs the texts do not settle, asks
math-verify about each once for the whole job (in a process pool when there are many: math-verify is pure
Python, threads would share one core; pairs sorted by gold, so a worker parses each ground truth once), and
then judges every response here with those verdicts known. An import hands each stored batch's pairs to the
pool at once (`PairVerifier.ask`), so math-verify works while the rest is stored.
"""

from __future__ import annotations

import itertools
import os
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future, wait
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, bindparam, select, update
from sqlmodel import Session

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript
from annotator.transcripts.evaluation_set import Item, items_by_data_id
from annotator.transcripts.judge.equivalence import Pair, verify_pairs
from annotator.transcripts.judge.pair_workers import Workers, bare_main, shared_worker, verify_stoppable
from annotator.transcripts.judge.rules import DEFAULT_RULE, Question, judge_both, open_pairs, rule

PARALLEL_MIN = 2000  # fewer transcripts: the process's one shared worker (a pool costs a second or two to start)
CHUNK = 24  # (gold, answer) pairs per task sent to a worker: a pair takes math-verify about 20 ms
WINDOW = 20_000  # transcripts read, judged and written back at a time (bounds memory: responses are long)
_IN_BATCH = 900
Job = tuple[int, str, Question]


@dataclass
class JudgeSummary:
    rule: str
    version: str
    judged: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    classes: Counter[str] = field(default_factory=Counter)
    rules_disagree: int = 0
    timed_out: int = 0  # responses judged with a pair undecided
    pairs_undecided: int = 0  # distinct (gold, answer) pairs without a verdict (`PairVerifier.undecided`)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "version": self.version,
            "judged": self.judged,
            "verdicts": dict(sorted(self.verdicts.items())),
            "classes": dict(sorted(self.classes.items())),
            "rules_disagree": self.rules_disagree,
            "timed_out": self.timed_out,
            "pairs_undecided": self.pairs_undecided,
            "seconds": round(self.seconds, 3),
        }


def question_of(item: Item) -> Question:
    return Question(ground_truth=item.ground_truth, unsolvable=item.unsolvable, treecut=item.treecut)


def judge_jobs(
    rule_name: str, jobs: Sequence[Job], known: dict[Pair, bool | None] | None = None
) -> list[dict[str, Any]]:
    """The stored fields of each job's judgement; `known`: math-verify's verdicts already computed."""
    chosen = rule(rule_name)
    rows = []
    for transcript_id, response, question in jobs:
        judgement, disagree = judge_both(response, question, rule_name=rule_name, known=known)
        rows.append(
            {
                "_id": transcript_id,
                "extracted_answer": judgement.extracted_answer,
                "judge_rule": chosen.name,
                "judge_version": chosen.version,
                "judge_class": judgement.judge_class.value,
                "judge": judgement.verdict.value,
                "rules_disagree": disagree,
                "_timed_out": judgement.timed_out,
            }
        )
    return rows


def _targets(session: Session, transcript_ids: Collection[int] | None) -> list[tuple[int, str]]:
    """(id, data_id) of the transcripts to judge, by id."""
    query = select(Transcript.id, Transcript.data_id)
    if transcript_ids is None:
        return [tuple(row) for row in session.execute(query.order_by(Transcript.id))]  # type: ignore[misc]
    ids = sorted(set(transcript_ids))
    found: list[tuple[int, str]] = []
    for start in range(0, len(ids), _IN_BATCH):
        chunk = query.where(Transcript.id.in_(ids[start : start + _IN_BATCH]))
        found.extend(tuple(row) for row in session.execute(chunk))  # type: ignore[misc]
    return sorted(found)


class _Access:
    """Sessions for reading and writing: the caller's (its one transaction), or short ones of an engine, so that
    a long re-judging holds SQLite's write lock only while a window's verdicts are written."""

    def __init__(self, target: Engine | Session) -> None:
        self.target = target

    @contextmanager
    def reading(self) -> Iterator[Session]:
        if isinstance(self.target, Session):
            yield self.target
        else:
            with read_session(self.target) as session:
                yield session

    @contextmanager
    def writing(self) -> Iterator[Session]:
        if isinstance(self.target, Session):
            yield self.target
        else:
            with write_session(self.target) as session:
                yield session


def _windows(access: _Access, targets: list[tuple[int, str]], questions: dict[str, Question]) -> Iterator[list[Job]]:
    """The jobs, WINDOW at a time, responses read by id range."""
    for start in range(0, len(targets), WINDOW):
        window = targets[start : start + WINDOW]
        wanted = dict(window)
        query = select(Transcript.id, Transcript.response).where(
            Transcript.id >= window[0][0], Transcript.id <= window[-1][0]
        )
        with access.reading() as session:
            jobs = [
                (transcript_id, response, questions[wanted[transcript_id]])
                for transcript_id, response in session.execute(query)
                if transcript_id in wanted and wanted[transcript_id] in questions
            ]
        yield jobs


class PairVerifier:
    """math-verify's verdicts on the (gold, answer) pairs of one job, asked as soon as the responses are known.

    With workers, `ask` only hands the new pairs to them (however few), which verify them while the caller goes on
    (an import stores its next rows meanwhile); `known` waits for what was asked. Each ground truth belongs to one
    worker (by its hash), so it is parsed once in the whole job however its pairs arrive. A worker that ends on a
    pair (past its hard limit: `pair_workers`) is replaced, that pair is undecided (None) and the rest of its work
    is sent again. Without workers (a small job), the first pair starts this process's one shared worker
    (`pair_workers.shared_worker`), so that every pair's time is bounded; `here=True` verifies them in this process
    instead, under the soft time limit alone. `undecided` counts the pairs without a verdict.
    """

    def __init__(self, workers: Sequence[Executor], *, here: bool = False) -> None:
        self.workers = workers if isinstance(workers, Workers) else list(workers)
        self._here = here
        self._known: dict[Pair, bool | None] = {}
        self._asked: set[Pair] = set()
        self._pending: list[_Task] = []
        self._resent: Counter[Pair] = Counter()
        self._ends: dict[Executor, tuple[int, int] | None] = {}  # a replaced worker -> (task, position) it ended on

    @property
    def undecided(self) -> int:
        """How many pairs asked so far got no verdict (out of time, too costly to evaluate, or math-verify failed)."""
        return sum(verdict is None for verdict in self._known.values())

    def ask(self, jobs: Iterable[Job]) -> None:
        """Start on the pairs of `jobs` that no earlier `ask` had."""
        self.ask_pairs(pair for _, response, question in jobs for pair in open_pairs(response, question))

    def ask_pairs(self, pairs: Iterable[Pair]) -> None:
        """Start on those of `pairs` that no earlier `ask` had."""
        new = sorted(set(pairs) - self._asked)
        self._asked.update(new)
        if not new:
            return
        if not self.workers and self._here:
            self._known.update(zip(new, verify_pairs(new)))
            return
        if not self.workers:
            self.workers = shared_worker()
        # With workers, even a few pairs go to them: this process is busy (storing, judging) and a pair that parses
        # a new ground truth takes math-verify tens of milliseconds.
        shares: list[list[Pair]] = [[] for _ in self.workers]
        for pair in new:  # sorted by gold: a worker's share keeps each gold's pairs together
            shares[hash(pair[0]) % len(self.workers)].append(pair)
        for index, share in enumerate(shares):
            for start in range(0, len(share), CHUNK):
                self._submit(index, share[start : start + CHUNK])

    def _submit(self, index: int, chunk: list[Pair]) -> None:
        number = next(_TASK_NUMBERS)  # unique in the process: the shared worker serves several verifiers
        with bare_main():  # a submit starts the worker if it has not started
            try:
                future = self.workers[index].submit(verify_stoppable, number, chunk)
            except BrokenExecutor:  # it ended on an earlier task, not collected yet
                future = self._replaced(index, self.workers[index]).submit(verify_stoppable, number, chunk)
        self._pending.append(_Task(index, self.workers[index], number, chunk, future))

    def _replaced(self, index: int, broken: Executor) -> Executor:
        """The worker at `index`, a new one if it is still the broken one (noting the pair that one ended on)."""
        if self.workers[index] is broken and isinstance(self.workers, Workers):
            self._ends[broken] = self.workers.working_on(index)
            self.workers.replace(index, broken)
        return self.workers[index]

    def _collect(self, task: _Task) -> None:
        """Keep a finished task's verdicts; for one whose worker ended, the pair it ended on is undecided and the
        others are sent again (each at most `_RESENT_MAX` times: then undecided too)."""
        culprit = None
        try:
            self._known.update(zip(task.chunk, task.future.result()))
            return
        except BrokenExecutor:
            self._replaced(task.index, task.worker)
            on = self._ends.get(task.worker)
            if on is not None and on[0] == task.number:
                culprit = task.chunk[on[1]]
                self._known[culprit] = None
        except Exception:  # noqa: BLE001 - a worker's failure undecides its pairs, never the job
            pass
        again = []
        for pair in task.chunk:
            self._resent[pair] += 1
            if pair == culprit:
                continue
            if self._resent[pair] > _RESENT_MAX or not isinstance(self.workers, Workers):
                self._known[pair] = None
            else:
                again.append(pair)
        if again:
            self._submit(task.index, again)

    def ready(self) -> dict[Pair, bool | None]:
        """The verdicts known by now, without waiting (the workers' finished answers collected)."""
        if any(task.future.done() for task in self._pending):
            done = [task for task in self._pending if task.future.done()]
            self._pending = [task for task in self._pending if not task.future.done()]
            for task in done:
                self._collect(task)
        return self._known

    def known(self) -> dict[Pair, bool | None]:
        """The verdicts on every pair asked so far (waiting for the workers' last answers)."""
        while self._pending:
            task = self._pending.pop(0)
            wait([task.future])
            self._collect(task)
        return self._known


@dataclass
class _Task:
    index: int  # of the worker
    worker: Executor
    number: int
    chunk: list[Pair]
    future: Future[list[bool | None]]


_RESENT_MAX = 3
_TASK_NUMBERS = itertools.count(1)


@contextmanager
def pair_verifier(size: int, workers: int | None = None) -> Iterator[PairVerifier]:
    """A `PairVerifier` for a job of `size` transcripts: with worker processes when the job is big enough."""
    with judge_workers(size, workers) as executors:
        yield PairVerifier(executors)


@contextmanager
def judge_workers(size: int, workers: int | None = None) -> Iterator[list[Executor]]:
    """Worker processes for a job of `size` transcripts (`pair_workers.Workers`); none for a small job or one
    core."""
    count = workers if workers is not None else min(os.cpu_count() or 1, 4)
    if size < PARALLEL_MIN or count < 2:
        yield []
        return
    with ExitStack() as stack:
        yield Workers(stack, count)


_UPDATE_FIELDS = ("extracted_answer", "judge_rule", "judge_version", "judge_class", "judge", "rules_disagree")


def _write(session: Session, rows: list[dict[str, Any]]) -> None:
    table = Transcript.__table__
    statement = (
        update(table)
        .where(table.c.id == bindparam("_id"))
        .values({name: bindparam(name) for name in _UPDATE_FIELDS})
    )
    session.connection().execute(statement, [{key: row[key] for key in ("_id", *_UPDATE_FIELDS)} for row in rows])


def _judge_in(
    access: _Access,
    rule_name: str,
    transcript_ids: Collection[int] | None,
    workers: int | None,
    verifier: PairVerifier | None,
    asked: bool,
) -> JudgeSummary:
    started = time.perf_counter()
    chosen = rule(rule_name)
    summary = JudgeSummary(chosen.name, chosen.version)
    with access.reading() as session:
        targets = _targets(session, transcript_ids)
        items = items_by_data_id(session, data_ids={data_id for _, data_id in targets})
    questions = {data_id: question_of(item) for data_id, item in items.items()}
    with ExitStack() as stack:
        if verifier is None:  # math-verify's verdicts, for the whole job
            verifier = stack.enter_context(pair_verifier(len(targets), workers))
        for jobs in _windows(access, targets, questions):
            if not asked:
                verifier.ask(jobs)
            rows = judge_jobs(rule_name, jobs, verifier.known())
            if rows:
                with access.writing() as session:
                    _write(session, rows)
            for row in rows:
                summary.verdicts[row["judge"]] += 1
                summary.classes[row["judge_class"]] += 1
                summary.rules_disagree += row["rules_disagree"]
                summary.timed_out += row["_timed_out"]
            summary.judged += len(rows)
        summary.pairs_undecided = verifier.undecided
    summary.seconds = time.perf_counter() - started
    return summary


def judge_transcripts(
    target: Engine | Session,
    *,
    rule: str = DEFAULT_RULE,
    transcript_ids: Collection[int] | None = None,
    workers: int | None = None,
    verifier: PairVerifier | None = None,
    asked: bool = False,
) -> JudgeSummary:
    """(Re-)judge the given transcripts, or all of them, under `rule` and store the verdicts.

    With a session the work joins its transaction; with an engine each window of `WINDOW` transcripts is
    written in a short transaction of its own (judging holds no lock; an interrupted run leaves each
    transcript with the rule that last judged it, which it names). `workers` sets the process pool's size
    (default: the cores, at most 4); fewer than `PARALLEL_MIN` transcripts are judged in this process. A caller
    that had math-verify start on these transcripts' pairs earlier passes its `verifier` (an import does), and
    `asked` when it asked every one of them (their responses need not be read for pairs again).
    """
    return _judge_in(_Access(target), rule, transcript_ids, workers, verifier, asked)
