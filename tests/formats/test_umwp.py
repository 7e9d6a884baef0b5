"""UMWP in and out: answerable records as problems, unanswerable ones as candidates of their originals,
exported record for record; bad records name file, line and field and import nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.db import read_session
from annotator.formats import InputError, read
from annotator.importer import import_parts
from annotator.models import Candidate, Problem

RECORDS = [
    {
        "id": 1,
        "question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
        "answer": [7.0],
        "answerable": True,
        "category": None,
        "relevant_ids": None,
        "source": "SVAMP",
    },
    {
        "id": 2,
        "question": "Tom has some apples and buys 4 more. How many apples does he have?",
        "answer": None,
        "answerable": False,
        "category": 1,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 3,
        "question": "A train goes 60 km/h for 2.5 hours. How far does it go?",
        "answer": [150.0],
        "answerable": True,
        "category": None,
        "relevant_ids": None,
        "source": "GSM8K",
    },
    {
        "id": 4,
        "question": "Tom has 3 apples and buys 4 more. How many pears does Mary have?",
        "answer": None,
        "answerable": False,
        "category": 4,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 5,
        "question": "A train goes 60 km/h for 2.5 hours.",
        "answer": None,
        "answerable": False,
        "category": 5,
        "relevant_ids": [3, 1],
        "source": "GSM8K",
    },
    {
        "id": 6,
        "question": "Tom has 3 apples and buys -4 more. How many apples does he have?",
        "answer": None,
        "answerable": False,
        "category": 3,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 7,
        "question": "Tom has 3 apples and buys 4 more. Or 5. How many apples does he have?",
        "answer": None,
        "answerable": False,
        "category": 2,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 8,
        "question": "Ann had 12 cookies and ate 5. How many are left?",
        "answer": [7],
        "answerable": True,
        "category": None,
        "relevant_ids": None,
        "source": "MultiArith",
    },
    {
        "id": 9,
        "question": "Ann had 12 cookies and ate 5, then 2 more, in two days.",
        "answer": None,
        "answerable": False,
        "category": 5,
        "relevant_ids": [8],
        "source": "ASDiv",
    },
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_unanswerable_records_become_candidates_of_their_original(sqlite_engine: Engine, tmp_path: Path) -> None:
    import_parts(read(write_jsonl(tmp_path / "UMWP.jsonl", RECORDS)), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        rows = session.execute(select(Candidate.data_id, Candidate.rewrite_type, Problem.source_id).join(Problem)).all()
        problem = session.execute(select(Problem).where(Problem.position == 3)).scalar_one()
    assert sorted(rows) == sorted(
        [
            ("umwp_1_remove_1", "remove", 1),
            ("umwp_1_unrelated_1", "unrelated", 1),
            ("umwp_3_noquestion_1", "noquestion", 3),
            ("umwp_1_unrealistic_1", "unrealistic", 1),
            ("umwp_1_ambiguous_1", "ambiguous", 1),
            ("umwp_8_noquestion_1", "noquestion", 8),
        ]
    )
    assert problem.ground_truth == [150.0] and problem.data_source == "umwp"


def test_relevant_ids_beyond_the_first_are_kept(sqlite_engine: Engine, tmp_path: Path) -> None:
    """UMWP's records name the answerable record(s) a variant was made from (`relevant_ids`); the candidate
    hangs off the first, and keeps the others where the annotator sees them."""
    import_parts(read(write_jsonl(tmp_path / "UMWP.jsonl", RECORDS)), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        candidate = session.execute(select(Candidate).where(Candidate.data_id == "umwp_3_noquestion_1")).scalar_one()
    assert candidate.provenance["relevant_ids"] == [3, 1]
    assert candidate.unsolvable_reason == "UMWP category 5: question missing. Also made from record 1."


@pytest.mark.parametrize(
    ("index", "change", "field", "message"),
    [
        (0, {"id": "1"}, "id", "expected a whole number"),
        (2, {"id": True}, "id", "expected a whole number"),
        (1, {"question": 12}, "question", "expected text"),
        (3, {"answerable": "no"}, "answerable", "expected true or false"),
        (0, {"answer": ["7"]}, "answer", "expected a list of numbers"),
        (0, {"answer": None}, "answer", "an answerable record needs its answer"),
        (1, {"category": 7}, "category", "expected null or a category 1-5"),
        (1, {"category": None}, "category", "needs its category"),
        (1, {"relevant_ids": None}, "relevant_ids", "must name its answerable original"),
        (1, {"relevant_ids": ["1"]}, "relevant_ids", "expected null or a list of record ids"),
        (2, {"source": "MATH"}, "source", "expected one of GSM8K, SVAMP, MultiArith, ASDiv"),
        (4, {"id": 1}, "id", "duplicate id 1"),
    ],
)
def test_bad_records_name_the_line_and_field(
    sqlite_engine: Engine, tmp_path: Path, index: int, change: dict, field: str, message: str
) -> None:
    records = [dict(r) for r in RECORDS]
    records[index].update(change)
    source = write_jsonl(tmp_path / "UMWP.jsonl", records)
    with pytest.raises(InputError, match=message) as error:
        import_parts(read(source, format="umwp"), engine=sqlite_engine)
    assert (error.value.record, error.value.field, error.value.path) == (f"line {index + 1}", field, str(source))
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0


def test_a_missing_field_and_a_missing_original_are_reported(sqlite_engine: Engine, tmp_path: Path) -> None:
    records = [dict(r) for r in RECORDS]
    del records[5]["source"]
    with pytest.raises(InputError, match="line 6: field 'source': missing required field"):
        import_parts(read(write_jsonl(tmp_path / "a.jsonl", records)), engine=sqlite_engine)
    orphan = [r for r in RECORDS if r["id"] != 8]
    with pytest.raises(InputError, match="names problem 8 of data source 'umwp'"):
        import_parts(read(write_jsonl(tmp_path / "b.jsonl", orphan)), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() == 0
