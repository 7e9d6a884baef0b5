"""Writing what the readers yield into the database: one transaction per import, written in chunks of rows.
Transcripts are stored through `annotator.transcripts.collect.storing` and judged before the transaction commits.

Re-importing identical data changes nothing. A record whose id exists with different content is an error
that names both, unless `update=True`. Any error rolls the whole import back.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from operator import attrgetter
from typing import Any

from sqlalchemy import Engine, func, insert, select, text, update
from sqlmodel import Session

from annotator._util.bitset import BitSet
from annotator._util.gc_paused import paused
from annotator.accounts import auth
from annotator.database.engine import get_engine, is_sqlite, write_session
from annotator.database.models import Candidate, Problem, SourceFile, utcnow
from annotator.database.queries import texts_in
from annotator.database.raw_rows import iter_raw_tuples
from annotator.database.vocabulary import CandidateStatus
from annotator.import_export._candidates import CANDIDATE_FIELDS, Given, differing_fields, same
from annotator.import_export._problems import ProblemBook
from annotator.import_export._read_ahead import ReadAhead
from annotator.import_export.import_summary import ImportSummary
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    InputError,
    Location,
    ProblemRecord,
    SourceFileInfo,
    TranscriptRecord,
)
from annotator.labelling import labels, queue
from annotator.transcripts.judge.import_workers import JudgeWorkers

CHUNK_SIZE = 2000
# Candidates per chunk on SQLite, in CHUNK_SIZEs: fewer chunks run fewer statements, each long enough for the reader
# to read a good part of the next chunk meanwhile (`import_parts`). A chunk's records are what the import holds.
SQLITE_CHUNKS = 5
# SQLite's page cache for an import's transaction (`write_session(cache_mib=...)`): an import's executemany of
# transcripts keeps its indexes' pages in memory instead of re-reading the ones SQLite's default cache evicts.
IMPORT_CACHE_MIB = 64
PROBLEM_FIELDS = ("question", "ground_truth", "source_id", "solution", "extra")
# A stored candidate without labels or a decision (a decision's candidate is always "adjudicated").
_UNLABELLED = ((Candidate.label_count == 0) & Candidate.label_source.is_(None)).label("unlabelled")


# A label row made from its first five fields and the others' defaults (no time spent, no decision), without the
# named tuple's own __new__: a Python call per label of an import.
_label_row = tuple.__new__
_LABEL_ROW_DEFAULTS = tuple(labels.LabelRow._field_defaults[name] for name in labels.LabelRow._fields[5:])


def _where(loc: Location | None) -> str:
    return f"{loc.path} {loc.record}" if loc else "this import"


class _Importer:
    def __init__(self, session: Session, *, update: bool) -> None:
        self.session = session
        self.dialect = session.connection().dialect.name
        self.update = update
        self.summary = ImportSummary()
        self.problems = ProblemBook(session)
        self.pending: list[CandidateRecord] = []
        self.chunk_size = CHUNK_SIZE * (SQLITE_CHUNKS if self.dialect == "sqlite" else 1)
        self.pending_labels: list[tuple[CandidateRecord, int]] = []  # with the candidate's id
        self.unlabelled: list[int] = []  # those candidates known to hold no label or decision (`record_labels`)
        self.chunk_ids: dict[str, Location | None] = {}
        self.part_path = ""
        self.part_first_candidate_id = 0
        # Candidates in the database before this import (ids below `first_id`) that it met: counted unchanged once.
        self.met = BitSet()
        self.first_id = self._max_candidate_id() + 1
        self.annotator_ids: dict[str, int] = {}
        self.transcripts: Any = None  # a transcripts.storing.PendingTranscripts, made by the first transcript
        self.deferred_transcripts: list[TranscriptRecord] = []  # a streamed import's (PostgreSQL)

    def _max_candidate_id(self) -> int:
        return self.session.execute(select(func.max(Candidate.id))).scalar() or 0

    # -- problems ----------------------------------------------------------------------------------

    def _stored_values(self, key: tuple[str, int]) -> tuple[int | None, dict[str, Any]]:
        """The problem's id (None while queued) and its values, read back when stored (memory stays flat)."""
        if (row := self.problems.queued.get(key)) is not None:
            return None, {name: row[name] for name in PROBLEM_FIELDS}
        problem_id = self.problems.stored_id(key)
        columns = [getattr(Problem, name) for name in PROBLEM_FIELDS]
        stored = self.session.execute(select(*columns).where(Problem.id == problem_id)).one()
        return problem_id, dict(zip(PROBLEM_FIELDS, stored, strict=True))

    def add_problem(self, record: ProblemRecord) -> None:
        key = (record.data_source, record.position)
        values = {name: getattr(record, name) for name in PROBLEM_FIELDS}
        if not self.problems.known(key):
            self._queue_problem(record, values)
            return
        book, loc = self.problems, record.location
        if loc is not None and book.met_in_part(key):
            first = book.place(key)
            raise loc.error(f"duplicate problem: {record.data_source} position {record.position} already appears "
                            f"{'at ' + first.record if first else 'earlier in this file'}", "id")
        problem_id, stored = self._stored_values(key)
        differing = [name for name in PROBLEM_FIELDS if not same(stored[name], values[name])]
        if differing and not self.update:
            where = _where(book.place(key)) if book.met(key) else ""
            raise (loc or Location(self.part_path, "?")).error(
                f"conflicts with problem {record.data_source} position {record.position} already in the database "
                f"(problem id {problem_id}{', from ' + where if where else ''}); "
                f"{', '.join(differing)} differ. Use --update to replace it",
                differing[0],
            )
        if differing:
            self._flush_problems()
            self.session.execute(update(Problem).where(Problem.id == book.stored_id(key)).values(**values))
            self.summary.problems_updated += 1
        elif not book.met(key):  # not met before in this import (solve.json repeats solve/*.json)
            self.summary.unchanged += 1
        if loc is not None and not book.met(key):
            book.meet(key, loc)

    def _queue_problem(self, record: ProblemRecord, values: dict[str, Any]) -> None:
        key = (record.data_source, record.position)
        self.problems.queue(key, {"data_source": record.data_source, "position": record.position,
                                  "created_at": utcnow(), **values})
        if record.location is not None:
            self.problems.meet(key, record.location)
        self.summary.problems_added += 1
        if len(self.problems.queued) >= CHUNK_SIZE:
            self._flush_problems()

    def _flush_problems(self) -> None:
        """Insert the queued problems (their ids are read when a candidate needs them)."""
        self.problems.flush()

    def ensure_problem(self, record: CandidateRecord) -> None:
        """Make sure the candidate's problem exists or is queued; create it from the record if it may."""
        if self.problems.known((record.data_source, record.problem_position)):
            return
        if record.problem is not None and not record.require_problem:
            self.add_problem(record.problem)
            return
        raise (record.location or Location(self.part_path, "?")).error(
            f"{record.data_id!r} names problem {record.problem_position} of data source {record.data_source!r}, "
            "which is neither in the database nor in this import (import its solve file first)", "data_id")

    # -- candidates --------------------------------------------------------------------------------

    def add_candidate(self, record: CandidateRecord) -> None:
        if record.data_id in self.chunk_ids:
            raise (record.location or Location(self.part_path, "?")).error(
                f"duplicate data_id {record.data_id!r}: it already appears at {_where(self.chunk_ids[record.data_id])}",
                "data_id",
            )
        self.chunk_ids[record.data_id] = record.location
        self.pending.append(record)
        if len(self.pending) >= self.chunk_size:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        records, self.pending = self.pending, []
        self.chunk_ids = {}
        # Only the fields these records give: decoding the stored JSON of the others would be wasted work.
        given = Given.of([name for name in CANDIDATE_FIELDS
                           if [*map(attrgetter(name), records)].count(None) < len(records)])
        columns = [Candidate.id, Candidate.data_id, *(getattr(Candidate, name) for name in given.names), _UNLABELLED]
        data_ids = texts_in(Candidate.data_id, [r.data_id for r in records], dialect=self.dialect)
        # The JSON fields as their text.
        existing = {row[1]: row for row in iter_raw_tuples(self.session, select(*columns).where(data_ids))}
        new: list[CandidateRecord] = []
        for record in records:
            row = existing.get(record.data_id)
            if row is None and record.label_only:
                raise (record.location or Location(self.part_path, "?")).error(
                    f"unknown data_id {record.data_id!r}: no such candidate in the database", "data_id"
                )
            if row is None:
                new.append(record)
            else:
                self._merge_candidate(record, row, given)
        if new:
            self._insert_candidates(new)
        self._merge_labels()

    def _loc(self, record: CandidateRecord) -> Location:
        return record.location or Location(self.part_path, "?")

    def _merge_candidate(self, record: CandidateRecord, row: Any, given: Given) -> None:
        if record.label_only:  # an Excel batch: only its label counts
            if record.label is None:
                self.summary.unlabelled += 1
            else:
                self.pending_labels.append((record, row[0]))
            return
        candidate_id = row[0]
        if candidate_id >= self.part_first_candidate_id:
            raise self._loc(record).error(f"duplicate data_id {record.data_id!r}: it already appears earlier in this "
                                          "file", "data_id")
        differing = differing_fields(given, row[2:-1], record)
        if differing and not self.update:
            raise self._loc(record).error(
                f"conflicts with candidate {record.data_id!r} already in the database (candidate id {candidate_id}); "
                f"{', '.join(differing)} differ. Use --update to replace it",
                differing[0],
            )
        first_met = self.met.add_new(candidate_id)
        if differing:
            values = {name: getattr(record, name) for name in differing}
            self.session.execute(update(Candidate).where(Candidate.id == candidate_id).values(**values,
                                                                                          updated_at=utcnow()))
            self.summary.candidates_updated += 1
        elif candidate_id < self.first_id and first_met:  # unsol.json repeats unsol/*.json
            self.summary.unchanged += 1
        if record.label is not None:
            self.pending_labels.append((record, candidate_id))
            if row[-1] and self.dialect == "sqlite":  # read under the write lock this import holds
                self.unlabelled.append(candidate_id)

    def _merge_labels(self) -> None:
        """The labels of this chunk's existing candidates, recorded set-based (`labels.record_labels`)."""
        pending, self.pending_labels = self.pending_labels, []
        unlabelled, self.unlabelled = self.unlabelled, []
        rows, batch_labels, ids, make = [], [], self.annotator_ids, _label_row
        for record, candidate_id in pending:
            label = record.label
            assert label is not None
            annotator_id = ids.get(label.annotator) or self._annotator_id(label.annotator, account=label.account,
                                                                           loc=self._loc(record))
            if record.label_only:
                batch_labels.append((candidate_id, annotator_id))
            rows.append(make(labels.LabelRow, (candidate_id, annotator_id, label.human_check, label.difficulty_eval,
                                               label.comment) + _LABEL_ROW_DEFAULTS))
        try:
            added, updated = labels.record_labels(self.session, rows=rows, replace=self.update, keep_comments=True,
                                                  unlabelled=unlabelled)
        except labels.LabelConflict as conflict:
            record, _candidate_id = pending[conflict.index]
            assert record.label is not None
            stored = (f"comment {conflict.comment!r}" if conflict.field == "comment" else
                      f"human_check {conflict.human_check}, difficulty_eval {conflict.difficulty_eval}")
            raise self._loc(record).error(
                f"conflicts with {record.label.annotator}'s label on {record.data_id!r} already in the database "
                f"({stored}). Use --update to replace it",
                conflict.field,
            ) from None
        self.summary.labels_added += added
        self.summary.labels_updated += updated
        # A candidate labelled in an Excel batch is released from its annotator's batch claim.
        queue.release_labelled(self.session, labels=batch_labels)

    def _annotator_id(self, name: str, *, account: bool = False, loc: Location | None = None) -> int:
        if name in self.annotator_ids:
            return self.annotator_ids[name]
        if account:
            found = auth.account_id(self.session, name=name)
            if found is None:
                raise (loc or Location(self.part_path, "?")).error(
                    f"the labels belong to {name!r}, who has no account (add it with `python -m annotator user add`, "
                    "or name the annotator with --annotator)",
                    "annotator",
                )
            self.annotator_ids[name] = found
        else:
            self.annotator_ids[name] = auth.system_annotator_id(self.session, name=name)
        return self.annotator_ids[name]

    def _insert_candidates(self, records: list[CandidateRecord]) -> None:
        for record in records:
            self.ensure_problem(record)
        self._flush_problems()
        now = utcnow()
        rows = [
            {"problem_id": self.problems.stored_id((record.data_source, record.problem_position)),
             "data_id": record.data_id,
             "data_source": record.data_source, "position": record.position, "status": CandidateStatus.pending.value,
             "label_count": 0, "created_at": now, "updated_at": now,
             **{name: getattr(record, name) for name in CANDIDATE_FIELDS}}
            for record in records
        ]
        # Core executemany: the ORM's bulk path costs several times more per row.
        connection = self.session.connection()
        connection.execute(insert(Candidate.__table__), rows)
        self.summary.candidates_added += len(rows)
        labelled = {record.data_id: record for record in records if record.label}
        if labelled:  # their labels go with the others (`_merge_labels`)
            query = select(Candidate.data_id, Candidate.id).where(Candidate.data_id.in_(list(labelled)))
            for data_id, candidate_id in connection.execute(query):
                self.pending_labels.append((labelled[data_id], candidate_id))
                self.unlabelled.append(candidate_id)  # made by this transaction: no one else's label yet

    # -- transcripts ------------------------------------------------------------------------------

    def expect_transcripts(self, records: list[TranscriptRecord], workers: Sequence[Any] | None = None) -> None:
        """All of this import's transcripts, before the first is added: math-verify starts on them (`storing`)."""
        if records:  # imported here: most imports never need the transcripts package
            from annotator.transcripts.collect.storing import PendingTranscripts

            self.transcripts = PendingTranscripts(self.session, chunk_size=CHUNK_SIZE, upcoming=records,
                                                  workers=workers)

    def add_transcript(self, record: TranscriptRecord) -> None:
        if self.transcripts is None:  # a streamed import's: stored once every file is read (`store_deferred`)
            self.deferred_transcripts.append(record)
            return
        self.summary.transcripts_added += self.transcripts.add(record)

    def store_deferred(self, workers: Sequence[Any] | None = None) -> None:
        """A streamed import's transcripts, after its problems and candidates: all of their pairs asked at once."""
        deferred, self.deferred_transcripts = self.deferred_transcripts, []
        self.expect_transcripts(deferred, workers)
        for record in deferred:
            self.summary.transcripts_added += self.transcripts.add(record)
        if deferred:
            self.summary.transcripts_added += self.transcripts.flush()

    # -- files ------------------------------------------------------------------------------------

    def start_part(self, part: ImportPart) -> None:
        self.flush()
        self.problems.start_part()
        self.part_path = part.path
        self.part_first_candidate_id = self._max_candidate_id() + 1
        self.summary.files.append(part.path)

    def finish_part(self, part: ImportPart, count: int) -> None:
        self.flush()
        self._flush_problems()
        if self.transcripts is not None:
            self.summary.transcripts_added += self.transcripts.flush()
        name = part.source_file.name if part.source_file else part.path
        for oddity, times in part.oddities.items():
            self.summary.oddities.append(f"{name}: {oddity.describe(times)}")
        if part.source_file is None:
            return
        self._remember_file(part.source_file, count)

    def _remember_file(self, info: SourceFileInfo, count: int) -> None:
        current = self.session.execute(
            select(SourceFile).where(SourceFile.format == info.format, SourceFile.name == info.name)
        ).scalar_one_or_none()
        if current is None:
            self.session.add(SourceFile(format=info.format, name=info.name, kind=info.kind, options=info.options,
                                        record_count=count, sha256=info.sha256))
        elif current.sha256 != info.sha256:
            current.kind, current.options, current.sha256 = info.kind, info.options, info.sha256
            current.record_count = count
            current.imported_at = utcnow()
        self.session.flush()


def import_parts(parts: Iterable[ImportPart], *, engine: Engine | None = None, update: bool = False,
                 authorize: Callable[[Session], None] | None = None) -> ImportSummary:
    """Import everything in one transaction; on any error nothing is written and the error is raised.
    `authorize` runs first inside that transaction (a page's check that its admin may still write).

    The records stream into the transaction as they are read, so a bad record rolls the whole import back and every
    bad file is still told (`formats.read_all`). On SQLite the transaction holds the one write lock, which
    annotators' labels wait for: there the files are read in a thread of their own that runs only while SQLite
    executes the import's statements or the import waits for records (`_read_ahead`), and the transaction begins once
    the first record is read, so reading adds to the lock's time only what the writes do not cover. An import that
    starts with transcripts is read whole before the transaction there, their judges' workers started meanwhile
    (`JudgeWorkers`). PostgreSQL locks rows, not the database: its records are read in the import's own thread.
    """
    engine = engine or get_engine()
    if not is_sqlite(engine):  # streamed: each chunk's transcripts asked as it is stored
        return _write(((part, part.records) for part in parts), engine=engine, update=update, authorize=authorize)
    parts = list(parts)
    # Reading and writing make many objects and no cycles (records, rows read back, labels): the collector paused.
    with JudgeWorkers() as judges, paused(), ReadAhead(parts) as reader:
        if not isinstance(reader.first(), TranscriptRecord):
            return _write(((part, judges.counted(reader.records())) for part in parts), engine=engine, update=update,
                          authorize=authorize, judges=judges, reader=reader)
        try:
            records = [(part, judges.listed(reader.records())) for part in parts]
            gc.freeze()  # kept to the end of the import: the collector need not walk them again
            return _write(records, engine=engine, update=update, authorize=authorize, judges=judges)
        finally:
            gc.unfreeze()


def _write(records: Iterable[tuple[ImportPart, Iterable[Any]]], *, engine: Engine, update: bool,
           authorize: Callable[[Session], None] | None, judges: JudgeWorkers | None = None,
           reader: ReadAhead | None = None) -> ImportSummary:
    with write_session(engine, cache_mib=IMPORT_CACHE_MIB) as session, \
            reader.during_statements(session.connection()) if reader is not None else nullcontext():
        if not is_sqlite(engine):
            # Lookups run thousands of times in one import; after five psycopg prepares them and PostgreSQL may
            # settle on one generic plan, made while the tables were small or not analyzed in this transaction
            # (a problem lookup by data_source and position then read 100,000 index entries each time at 1M).
            session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
        if authorize is not None:
            authorize(session)
        importer = _Importer(session, update=update)
        if isinstance(records, list):  # all read: math-verify starts on every transcript's pairs at once
            importer.expect_transcripts([r for _, rs in records for r in rs if isinstance(r, TranscriptRecord)],
                                        judges.executors if judges else None)
        for part, part_records in records:
            importer.start_part(part)
            count = 0  # the file's records
            for record in part_records:
                count += 1
                if isinstance(record, ProblemRecord):
                    importer.add_problem(record)
                elif isinstance(record, TranscriptRecord):
                    importer.add_transcript(record)
                else:
                    importer.add_candidate(record)
            importer.finish_part(part, count)
        importer.store_deferred(judges.executors if judges else None)
        if importer.transcripts is not None:
            importer.transcripts.judge()  # in this transaction: a judging error stores nothing
            importer.summary.pairs_undecided = importer.transcripts.undecided
    return importer.summary


__all__ = ["ImportSummary", "InputError", "import_parts"]
