"""Storing transcripts made elsewhere (each names an existing item, none comes twice, all set-based) and
reading them back for exports."""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from contextlib import ExitStack
from typing import Any

from sqlalchemy import and_, bindparam, insert, select, update
from sqlmodel import Session

from annotator.database.models import Transcript, utcnow
from annotator.database.queries import execute_many
from annotator.import_export.records import Location, TranscriptRecord
from annotator.transcripts.evaluation_set import Item, items_by_data_id
from annotator.transcripts.judge import verdicts
from annotator.transcripts.judge.rules import DEFAULT_RULE, Question, final_pairs, final_text, judge_final, rule
from annotator.transcripts.judge.verdicts import PairVerifier

_IN_BATCH = 900
_INSERT = insert(Transcript.__table__)
Key = tuple[str, str, str, int]
JUDGE_FIELDS = ("extracted_answer", "judge_rule", "judge_version", "judge_class", "judge", "rules_disagree")
_UNJUDGED = dict.fromkeys(JUDGE_FIELDS)


def _where(record: TranscriptRecord) -> Location:
    return record.location or Location("this import", "?")


def _existing_keys(session: Session, records: Sequence[TranscriptRecord]) -> set[Key]:
    """The keys among `records` that the database already holds (read by data_id within each (model, prompt) of
    the batch, so a big import does not read back its own earlier batches of other models)."""
    wanted = {record.key for record in records}
    found: set[Key] = set()
    columns = (Transcript.data_id, Transcript.model, Transcript.prompt, Transcript.sample)
    groups: dict[tuple[str, str], set[str]] = {}
    for record in records:
        groups.setdefault((record.model, record.prompt), set()).add(record.data_id)
    for (model, prompt), ids in groups.items():
        data_ids = sorted(ids)
        for start in range(0, len(data_ids), _IN_BATCH):
            query = select(*columns).where(Transcript.model == model, Transcript.prompt == prompt,
                                           Transcript.data_id.in_(data_ids[start : start + _IN_BATCH]))
            found.update(key for key in map(tuple, session.execute(query)) if key in wanted)
    return found  # type: ignore[return-value]


def _problem(
    record: TranscriptRecord, seen: dict[Key, Location], items: Collection[str], in_database: set[Key]
) -> str | None:
    """What is wrong with storing this record, if anything."""
    if record.key in seen:
        earlier = seen[record.key]
        return (
            f"duplicate transcript (data_id {record.data_id!r}, model {record.model!r}, prompt {record.prompt!r}, "
            f"sample {record.sample}): it already appears at {earlier.path} {earlier.record}"
        )
    if record.data_id not in items:
        return (
            f"{record.data_id!r} names no item: neither a candidate's data_id nor {{data_source}}_{{position}} of an "
            "imported problem (import the problems and candidates first)"
        )
    if record.key in in_database:
        return (
            f"duplicate transcript: the database already holds data_id {record.data_id!r}, model {record.model!r}, "
            f"prompt {record.prompt!r}, sample {record.sample}"
        )
    return None


def insert_transcripts(
    session: Session,
    *,
    records: Sequence[TranscriptRecord],
    seen: dict[Key, Location],
    items: dict[str, Item] | None = None,
    verdicts: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """Insert `records` (one executemany) and return how many.

    Raises the first bad record's InputError: its (data_id, model, prompt, sample) is in `seen` (earlier in
    this import; updated here), its item does not exist, or the database already holds it. `items`: the items
    read so far in this import, by data_id (those missing are read and added). `verdicts`: each record's judge
    fields (`JUDGE_FIELDS`), stored with it.
    """
    if not records:
        return 0
    items = {} if items is None else items
    missing = {record.data_id for record in records} - items.keys()
    if missing:
        items.update(items_by_data_id(session, data_ids=missing))
    in_database = _existing_keys(session, records)
    for record in records:
        problem = _problem(record, seen, items.keys(), in_database)
        if problem is not None:
            raise _where(record).error(problem, "data_id")
        seen[record.key] = _where(record)
    now = utcnow()
    rows = [
        {
            "data_id": record.data_id,
            "problem_id": items[record.data_id].problem_id,
            "candidate_id": items[record.data_id].candidate_id,
            "model": record.model,
            "prompt": record.prompt,
            "sample": record.sample,
            "response": record.response,
            "reasoning": record.reasoning,
            "params": record.params,
            "finish_reason": record.finish_reason,
            "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens,
            "source": record.source,
            "created_at": now,
            **(verdicts[index] if verdicts is not None else _UNJUDGED),
        }
        for index, record in enumerate(records)
    ]
    # No RETURNING: a plain executemany is about half the cost on SQLite, and a row is found again by its key.
    # The driver's own executemany (`store.execute_many`): SQLAlchemy's per-row parameter work was a quarter of
    # an import's own CPU time (56,600 responses under cProfile: 2 s of 8).
    execute_many(session, _INSERT, rows)
    return len(rows)


EXPORT_COLUMNS = (
    Transcript.data_id,
    Transcript.model,
    Transcript.prompt,
    Transcript.sample,
    Transcript.response,
    Transcript.extracted_answer,
    Transcript.judge_rule,
    Transcript.judge_class,
    Transcript.judge,
    Transcript.human,
    Transcript.tags,
    Transcript.comment,
)


def iter_transcripts(
    session: Session, *, batch: int = 1000, columns: Sequence[Any] = (), by_model_and_prompt: bool = False
) -> Iterator[dict[str, Any]]:
    """Every transcript as its export row (`EXPORT_COLUMNS` and any other `columns`), by id (within each model and
    prompt with `by_model_and_prompt`), with `verdict` (the human's where given, else the judge's); streamed, so
    memory does not grow with the number of transcripts."""
    order = (Transcript.model, Transcript.prompt, Transcript.id) if by_model_and_prompt else (Transcript.id,)
    query = select(*EXPORT_COLUMNS, *columns).order_by(*order).execution_options(yield_per=batch)
    for row in session.execute(query):
        values = row._asdict()
        values["verdict"] = values["human"] or values["judge"]
        yield values


class PendingTranscripts:
    """The transcripts one import adds: stored in batches inside its transaction (duplicates across batches
    refused), each judged (`DEFAULT_RULE`) as it is stored, so that a judging error stores nothing.

    math-verify is asked about the (gold, answer) pairs of every transcript the import will add (`upcoming`) at
    once, in a process pool when there are many (`workers`: the caller's, started while it read the file): it works
    while the rows are stored. A row goes in with its verdict when math-verify has answered its pairs (or the texts
    settle it), otherwise without, and is updated by its key once the last answers are in (`judge`), so no stored
    response is read back. Responses with the same item and final answer get the same judgement, worked out once.
    Memory: each upcoming record's final text until it is stored, and at most `_JUDGED_MAX` judgements.
    """

    def __init__(self, session: Session, *, batch_size: int, upcoming: Sequence[TranscriptRecord] = (),
                 workers: Sequence[Executor] | None = None) -> None:
        self.session = session
        self.batch_size = batch_size
        self.records: list[TranscriptRecord] = []
        self.seen: dict[Key, Location] = {}
        self.stored = 0
        self.undecided = 0  # (gold, answer) pairs math-verify gave no verdict on, once judged
        self._rule = rule(DEFAULT_RULE)
        self._pool = ExitStack()
        weakref.finalize(self, self._pool.close)  # an import that fails before judging stops the pool too
        self._items: dict[str, Item] = {}  # the items of this import's transcripts, read once
        self._questions: dict[str, Question] = {}
        self._finals: dict[int, str | None] = {}  # id(record) -> its final text, for records not stored yet
        self._judged: dict[tuple[str, str | None], dict[str, Any]] = {}  # (data_id, final text) -> judge fields
        self._waiting: list[tuple[Key, tuple[str, str | None]]] = []  # stored without a verdict yet
        if workers is None:  # none started by the caller: a pool of our own if the import is big enough
            workers = self._pool.enter_context(verdicts.judge_workers(len(upcoming)))
        self._verifier = PairVerifier(workers)
        self._ask(upcoming)

    def _question(self, data_id: str) -> Question | None:
        question = self._questions.get(data_id)
        if question is None and data_id in self._items:
            question = self._questions[data_id] = verdicts.question_of(self._items[data_id])
        return question

    def _ask(self, records: Iterable[TranscriptRecord]) -> None:
        """Work out the final texts of `records` and start math-verify on their pairs."""
        records = list(records)
        missing = {record.data_id for record in records} - self._items.keys()
        if missing:
            self._items.update(items_by_data_id(self.session, data_ids=missing))
        pairs: set[tuple[str, str]] = set()
        for record in records:
            question = self._question(record.data_id)
            if question is None:  # no such item: `insert_transcripts` says so when it comes
                continue
            final = self._finals[id(record)] = final_text(record.response, question)
            if (record.data_id, final) not in self._judged:
                pairs.update(final_pairs(final, question))
        if pairs:
            self._verifier.ask_pairs(pairs)

    def add(self, record: TranscriptRecord) -> int:
        """Queue one; returns how many were stored now (a full batch is stored at once)."""
        self.records.append(record)
        return self.flush() if len(self.records) >= self.batch_size else 0

    def flush(self) -> int:
        """Store what is queued, with the verdicts known by now; returns how many."""
        records, self.records = self.records, []
        if not records:
            return 0
        unasked = [record for record in records if id(record) not in self._finals]
        if unasked:  # not among the `upcoming` ones
            self._ask(unasked)
        known = self._verifier.ready()
        fields: list[Mapping[str, Any]] = []
        for record in records:
            final = self._finals.pop(id(record), None)
            judged = self._judgement(record.data_id, final, known)
            if judged is None:
                self._waiting.append((record.key, (record.data_id, final)))
            fields.append(judged or _UNJUDGED)
        stored = insert_transcripts(self.session, records=records, seen=self.seen, items=self._items, verdicts=fields)
        self.stored += stored
        return stored

    def _judgement(self, data_id: str, final: str | None, known: Mapping[tuple[str, str], bool | None]
                   ) -> dict[str, Any] | None:
        """The judge fields of a response to `data_id` with this final text; None while math-verify has not
        answered one of its pairs (or the item does not exist)."""
        judged = self._judged.get((data_id, final))
        if judged is not None:
            return judged
        question = self._question(data_id)
        if question is None or any(pair not in known for pair in final_pairs(final, question)):
            return None
        judgement, disagree = judge_final(final, question, rule_name=self._rule.name, known=known)
        if len(self._judged) >= _JUDGED_MAX:  # bounds memory on a huge import of ever new answers
            self._judged.clear()
        judged = self._judged[(data_id, final)] = {
            "extracted_answer": judgement.extracted_answer,
            "judge_rule": self._rule.name,
            "judge_version": self._rule.version,
            "judge_class": judgement.judge_class.value,
            "judge": judgement.verdict.value,
            "rules_disagree": disagree,
        }
        return judged

    def judge(self) -> None:
        """Give the rows stored without a verdict theirs, once math-verify has answered (then stop its pool)."""
        try:
            if self._waiting:
                known = self._verifier.known()
                table = Transcript.__table__
                statement = (
                    update(table)
                    .where(and_(*(table.c[name] == bindparam(f"_{name}") for name in _KEY_COLUMNS)))
                    .values({name: bindparam(name) for name in JUDGE_FIELDS})
                )
                for start in range(0, len(self._waiting), _UPDATE_BATCH):
                    rows = []
                    for key, (data_id, final) in self._waiting[start : start + _UPDATE_BATCH]:
                        judged = self._judgement(data_id, final, known)
                        assert judged is not None  # every pair was asked and is answered now
                        rows.append({**dict(zip(_KEY_PARAMS, key)), **judged})
                    execute_many(self.session, statement, rows)
                self._waiting.clear()
            self.undecided = self._verifier.undecided
        finally:
            self._pool.close()


_JUDGED_MAX = 200_000
_UPDATE_BATCH = 5000
_KEY_COLUMNS = ("data_id", "model", "prompt", "sample")
_KEY_PARAMS = tuple(f"_{name}" for name in _KEY_COLUMNS)
