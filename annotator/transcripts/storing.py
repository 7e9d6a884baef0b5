"""Storing transcripts made elsewhere (each names an existing item, none comes twice, all set-based) and
reading them back for exports."""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterator, Sequence
from contextlib import ExitStack
from typing import Any

from sqlalchemy import insert, select
from sqlmodel import Session

from annotator.models import Transcript, utcnow
from annotator.records import Location, TranscriptRecord
from annotator.transcripts import verdicts
from annotator.transcripts.items import Item, items_by_data_id
from annotator.transcripts.verdicts import PairVerifier

_IN_BATCH = 900
Key = tuple[str, str, str, int]


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
) -> list[int]:
    """Insert `records` (one executemany) and return their ids.

    Raises the first bad record's InputError: its (data_id, model, prompt, sample) is in `seen` (earlier in
    this import; updated here), its item does not exist, or the database already holds it. `items`: the items
    read so far in this import, by data_id (those missing are read and added).
    """
    if not records:
        return []
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
        }
        for record in records
    ]
    table = Transcript.__table__
    return list(session.connection().execute(insert(table).returning(table.c.id), rows).scalars())


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
    refused) and judged before it commits, so that a judging error stores nothing. Once the import is big
    enough for the judge's process pool, each stored batch's (gold, answer) pairs go to the pool at once, so
    math-verify works while the next batches are stored."""

    def __init__(self, session: Session, *, batch_size: int) -> None:
        self.session = session
        self.batch_size = batch_size
        self.records: list[TranscriptRecord] = []
        self.seen: dict[Key, Location] = {}
        self.ids: list[int] = []
        self._pool = ExitStack()
        weakref.finalize(self, self._pool.close)  # an import that fails before judging stops the pool too
        self._verifier: PairVerifier | None = None
        self._items: dict[str, Item] = {}  # the items of this import's transcripts, read once
        self._unasked: list[TranscriptRecord] = []  # stored before the pool opened

    def add(self, record: TranscriptRecord) -> int:
        """Queue one; returns how many were stored now (a full batch is stored at once)."""
        self.records.append(record)
        return self.flush() if len(self.records) >= self.batch_size else 0

    def flush(self) -> int:
        """Store what is queued; returns how many."""
        records, self.records = self.records, []
        ids = insert_transcripts(self.session, records=records, seen=self.seen, items=self._items) if records else []
        self.ids.extend(ids)
        self._ask(records)
        return len(ids)

    def _ask(self, records: list[TranscriptRecord]) -> None:
        if self._verifier is None:
            if len(self.ids) < verdicts.PARALLEL_MIN:
                self._unasked.extend(records)
                return
            self._verifier = self._pool.enter_context(verdicts.pair_verifier(len(self.ids)))
            records, self._unasked = [*self._unasked, *records], []
        questions = {data_id: verdicts.question_of(self._items[data_id]) for data_id in {r.data_id for r in records}}
        self._verifier.ask((0, record.response, questions[record.data_id]) for record in records)

    def judge(self) -> None:
        try:
            if self.ids:
                # every stored record's pairs were asked as it was stored, if the pool opened at all
                verdicts.judge_transcripts(self.session, transcript_ids=self.ids, verifier=self._verifier,
                                           asked=self._verifier is not None)
        finally:
            self._pool.close()
