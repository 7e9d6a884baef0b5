"""The importer's problem bookkeeping (`annotator.import_export._problems`): bounded however many problems an import
meets, and still exact about which it met (duplicates in a file, problems counted unchanged once)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Problem
from annotator.import_export import _problems as _import_problems
from annotator.import_export import importer
from annotator.import_export._problems import ProblemBook
from annotator.import_export.records import ImportPart, InputError, Location, ProblemRecord

PROBLEMS = 30_000  # 15,000 per data source


def test_the_bookkeeping_holds_a_bounded_number_of_entries_after_many_problems(engine: Engine) -> None:
    bound = _import_problems.WINDOW * _import_problems.WINDOWS + _import_problems.LOCATIONS + importer.BATCH_SIZE
    assert bound < PROBLEMS
    keys = [(source, position) for position in range(PROBLEMS // 2) for source in ("s1", "s2")]
    with write_session(engine) as session:
        book = ProblemBook(session)
        for number, key in enumerate(keys):
            assert not book.known(key)
            book.queue(key, {"data_source": key[0], "position": key[1], "question": f"q{number}", "ground_truth": 1})
            book.meet(key, Location("solve.json", f"record {number + 1}"))
            if len(book.queued) >= importer.BATCH_SIZE:
                book.flush()
            assert book.size() <= bound
        book.flush()
        stored = {(source, position): id_ for id_, source, position in
                  session.execute(select(Problem.id, Problem.data_source, Problem.position))}
        assert len(stored) == PROBLEMS
        for key in keys:  # every id read back right, every position met remembered, the size still bounded
            assert book.stored_id(key) == stored[key] and book.met(key)
            assert book.size() <= bound
        assert not book.met(("s1", PROBLEMS)) and not book.met(("s3", 0)) and book.stored_id(("s1", PROBLEMS)) is None
        assert book.place(keys[-1]) == Location("solve.json", f"record {PROBLEMS}")
        assert book.place(keys[0]) is None  # its place is no longer kept: the bits still say it was met


def _part(path: str, positions: list[int]) -> ImportPart:
    return ImportPart(path, [ProblemRecord("src", position, f"question {position}", position,
                                           location=Location(path, f"line {line}"))
                             for line, position in enumerate(positions, start=1)])


def test_a_duplicate_problem_is_found_however_far_back_and_named_where_it_is_still_known(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_import_problems, "LOCATIONS", 2)
    monkeypatch.setattr(importer, "BATCH_SIZE", 3)
    with pytest.raises(InputError, match=r"a\.jsonl: line 6: .*duplicate problem: src position 0 already appears "
                                         r"earlier in this file"):
        importer.import_parts([_part("a.jsonl", [0, 1, 2, 3, 4, 0])], engine=engine)
    with pytest.raises(InputError, match=r"a\.jsonl: line 6: .*duplicate problem: src position 4 already appears "
                                         r"at line 5"):
        importer.import_parts([_part("a.jsonl", [0, 1, 2, 3, 4, 4])], engine=engine)
    with read_session(engine) as session:
        assert session.execute(select(Problem.id)).first() is None  # rolled back
    # Another file repeating them (solve.json after solve/*.json) is no duplicate, and nothing is unchanged twice.
    summary = importer.import_parts([_part("a.jsonl", [0, 1, 2, 3, 4]), _part("b.jsonl", [4, 3, 2, 1, 0])],
                                    engine=engine)
    assert (summary.problems_added, summary.unchanged) == (5, 0)
    summary = importer.import_parts([_part("a.jsonl", [0, 1, 2, 3, 4]), _part("b.jsonl", [4, 3, 2, 1, 0])],
                                    engine=engine)
    assert (summary.problems_added, summary.unchanged) == (0, 5)
