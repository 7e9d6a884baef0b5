"""UMWP in and out: answerable records as problems, unanswerable ones as candidates of their originals,
exported record for record; bad records name file, line and field and import nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Candidate, Problem
from annotator.import_export.formats import InputError, read
from annotator.import_export.importer import import_parts
from tests.support.umwp_records import QUIRKY, RECORDS, write_jsonl


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
        (1, {"category": 7}, "category", "expected a category 1-5"),
        (1, {"category": None}, "category", "needs its category"),
        (1, {"relevant_ids": None}, "relevant_ids", "must name its answerable original"),
        (1, {"relevant_ids": ["1"]}, "relevant_ids", "expected a list of record ids"),
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
    del records[5]["question"]
    with pytest.raises(InputError, match="line 6: field 'question': missing required field"):
        import_parts(read(write_jsonl(tmp_path / "a.jsonl", records)), engine=sqlite_engine)
    orphan = [r for r in RECORDS if r["id"] != 8]
    with pytest.raises(InputError, match="names problem 8 of data source 'umwp'"):
        import_parts(read(write_jsonl(tmp_path / "b.jsonl", orphan)), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() == 0


def test_real_file_quirks_are_kept_and_named_in_the_summary(sqlite_engine: Engine, tmp_path: Path) -> None:
    summary = import_parts(read(write_jsonl(tmp_path / "StandardDataset.jsonl", QUIRKY)), engine=sqlite_engine)
    assert (summary.problems_added, summary.candidates_added) == (3, 6)
    assert summary.oddities == [
        "StandardDataset.jsonl: 2 unanswerable records with a non-null answer, kept as given",
        "StandardDataset.jsonl: 2 records whose source is missing or not one of GSM8K, SVAMP, MultiArith, ASDiv, "
        "kept as given",
        "StandardDataset.jsonl: 1 answerable record whose answer is not a list of numbers, kept as given",
    ]
    assert summary.text().splitlines()[1:] == summary.oddities


def test_a_number_json_cannot_hold_is_refused(sqlite_engine: Engine, tmp_path: Path) -> None:
    """Data fields take any JSON value except one that could not be stored or written back: 1e999 parses to
    infinity."""
    source = write_jsonl(tmp_path / "UMWP.jsonl", RECORDS)
    source.write_text(source.read_text().replace('"answer": [7.0]', '"answer": [1e999]'), encoding="utf-8")
    with pytest.raises(InputError, match=r"UMWP.jsonl: line 1: field 'answer': is inf, which JSON cannot hold"):
        import_parts(read(source), engine=sqlite_engine)
