"""An import's files read in a thread of their own (`_read_ahead`), on a real SQLite file: the first record is read
before the import takes SQLite's write lock, transcripts all of them before it; a file that breaks mid-import, or a
conflict with the database, stops the reader, and the database is left as it was."""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, func, select, text

from annotator.database.engine import read_session
from annotator.database.models import Candidate, Transcript
from annotator.import_export import importer
from annotator.import_export._read_ahead import ReadAhead
from annotator.import_export.formats import read
from annotator.import_export.formats.reliablemath import sheet_candidate
from annotator.import_export.records import CandidateRecord, ImportPart, InputError, Location
from tests.support.candidates import add_candidates
from tests.support.sqlite_lock import write_locked


def _candidates(count: int, *, question: str = "Candidate {i}: how far has it gone?") -> Iterator[CandidateRecord]:
    """Labelled annotation-sheet rows as a reader makes them, each on a problem of its own."""
    for i in range(count):
        row = {"unsol_id": f"ahead_{i}_remove_1", "data_source": "ahead", "question": f"Problem {i}",
               "ground_truth": "9", "rewritten_question": question.format(i=i), "human_check": 1,
               "difficulty_eval": i % 2}
        yield sheet_candidate(row, Location("sheet.json", f"record {i + 1}"), annotator="alice", position=i)


def _count(engine: Engine, table: type) -> int:
    with read_session(engine) as session:
        return session.execute(select(func.count()).select_from(table)).scalar_one()


def _readers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "import-reader"]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "CHUNK_SIZE", 5)  # chunks of 25 candidates on SQLite


def test_the_parts_records_come_in_order_the_first_found_past_an_empty_part() -> None:
    parts = [ImportPart("empty.json", []), ImportPart("a.json", iter(range(70))), ImportPart("b.json", [70])]
    with ReadAhead(parts) as reader:
        assert reader.first() == 0
        assert [list(reader.records()) for _part in parts] == [[], list(range(70)), [70]]
    assert not _readers()


def test_what_reading_raises_is_raised_where_the_records_are_taken() -> None:
    def breaking(good: int) -> Iterator[int]:
        yield from range(good)
        raise InputError("sheet.json", "broken", record=f"record {good + 1}")

    with ReadAhead([ImportPart("sheet.json", breaking(1))], hand_over=1) as reader:
        assert reader.first() == 0
        records = reader.records()
        assert next(records) == 0
        with pytest.raises(InputError, match="record 2"):
            next(records)
    with ReadAhead([ImportPart("sheet.json", breaking(0))]) as reader, pytest.raises(InputError, match="record 1"):
        reader.first()
    assert not _readers()


def test_the_reader_may_run_during_a_single_statement_and_not_during_an_executemany(tmp_path: Path) -> None:
    """The gate, seen from inside SQLite: a SQL function reports whether it is open while the statement runs."""
    engine = create_engine(f"sqlite:///{tmp_path / 'gate.sqlite'}")
    with ReadAhead([]) as reader, engine.connect() as connection:
        connection.connection.driver_connection.create_function(  # type: ignore[union-attr]
            "gate_open", 1, lambda _row: int(reader._gate.is_set()))
        connection.exec_driver_sql("CREATE TABLE seen (statement TEXT, open INTEGER)")
        with reader.during_statements(connection):
            connection.execute(text("INSERT INTO seen VALUES ('single', gate_open(1))"))
            connection.execute(text("INSERT INTO seen VALUES ('many', gate_open(:n))"), [{"n": 1}, {"n": 2}])
            between = reader._gate.is_set()
        connection.execute(text("INSERT INTO seen VALUES ('after', gate_open(1))"))
        seen = connection.exec_driver_sql("SELECT statement, open FROM seen ORDER BY rowid").all()
    engine.dispose()
    assert [tuple(row) for row in seen] == [("single", 1), ("many", 0), ("many", 0), ("after", 0)]
    assert not between


def test_the_first_record_is_read_before_the_import_takes_the_write_lock(
    sqlite_engine: Engine, small_chunks: None
) -> None:
    database = sqlite_engine.url.database
    assert database is not None
    locked: list[bool] = []
    enabled: list[bool] = []

    def watched() -> Iterator[CandidateRecord]:
        for record in _candidates(60):
            if not locked:
                locked.append(write_locked(database))
            enabled.append(gc.isenabled())
            yield record

    summary = importer.import_parts([ImportPart("sheet.json", watched())], engine=sqlite_engine)
    assert (summary.candidates_added, summary.labels_added) == (60, 60)
    assert locked == [False]
    # Read with the cyclic collector paused (the records form no cycles), which runs again once the import is done.
    assert not any(enabled) and len(enabled) == 60 and gc.isenabled()
    assert not _readers()


def test_transcripts_are_all_read_before_the_import_takes_the_write_lock(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    database = sqlite_engine.url.database
    assert database is not None
    ids = add_candidates(sqlite_engine, 3)
    with read_session(sqlite_engine) as session:
        data_ids = session.execute(select(Candidate.data_id).where(Candidate.id.in_(ids))).scalars().all()
    path = tmp_path / "transcripts.jsonl"
    path.write_text("".join(json.dumps({"data_id": data_id, "model": "m", "prompt": "standard",
                                        "response": "\\boxed{4}"}) + "\n" for data_id in data_ids),
                    encoding="utf-8")
    [part] = read(path)
    records, locked = part.records, []

    def watched() -> Iterator[object]:
        for record in records:
            locked.append(write_locked(database))
            yield record

    part.records = watched()
    summary = importer.import_parts([part], engine=sqlite_engine)
    assert summary.transcripts_added == 3 and _count(sqlite_engine, Transcript) == 3
    assert locked == [False, False, False]


def test_a_file_that_breaks_mid_import_stops_the_reader_and_writes_nothing(
    sqlite_engine: Engine, small_chunks: None
) -> None:
    def breaking() -> Iterator[CandidateRecord]:
        yield from _candidates(60)  # two chunks written in the transaction before the break
        raise InputError("sheet.json", "broken", record="record 61")

    with pytest.raises(InputError, match="record 61"):
        importer.import_parts([ImportPart("sheet.json", breaking())], engine=sqlite_engine)
    assert _count(sqlite_engine, Candidate) == 0
    assert not _readers()


def test_a_conflict_in_the_first_chunk_stops_reading_the_rest_of_the_file(
    sqlite_engine: Engine, small_chunks: None
) -> None:
    importer.import_parts([ImportPart("first.json", _candidates(1))], engine=sqlite_engine)
    read_count = 0

    def long_file() -> Iterator[CandidateRecord]:
        nonlocal read_count
        # Candidate 0 again with another rewritten question: a conflict with the stored one.
        for record in _candidates(1_000_000, question="Changed {i}"):
            read_count += 1
            yield record

    with pytest.raises(InputError, match="conflicts with candidate 'ahead_0_remove_1'"):
        importer.import_parts([ImportPart("second.json", long_file())], engine=sqlite_engine)
    assert read_count < 100_000  # the reader stopped with the import, far from the file's end
    assert _count(sqlite_engine, Candidate) == 1
    assert not _readers()
