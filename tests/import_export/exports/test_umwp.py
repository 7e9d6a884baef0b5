"""The UMWP export: each imported file written back record for record, same values, types and layout."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from annotator.import_export.exports import export
from annotator.import_export.formats import detect, read
from annotator.import_export.importer import import_parts
from tests.support.umwp_records import QUIRKY, RECORDS, write_jsonl


def test_umwp_round_trips_record_for_record(engine: Engine, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "UMWP.jsonl", RECORDS)
    assert detect(source) == "umwp"
    summary = import_parts(read(source), engine=engine)
    assert (summary.problems_added, summary.candidates_added) == (3, 6)
    export("umwp", tmp_path / "out", engine=engine)
    lines = (tmp_path / "out" / "UMWP.jsonl").read_text(encoding="utf-8").splitlines()
    exported = [json.loads(line) for line in lines]
    assert exported == RECORDS
    # Same types, not just equal values: 7.0 stays a float, 7 an int, None stays null.
    assert [type(r["answer"][0]) if r["answer"] else None for r in exported] == [
        type(r["answer"][0]) if r["answer"] else None for r in RECORDS
    ]
    assert [list(r) for r in exported] == [list(r) for r in RECORDS]


def test_json_array_files_keep_their_layout(sqlite_engine: Engine, tmp_path: Path) -> None:
    source = tmp_path / "umwp.json"
    source.write_text(json.dumps(RECORDS, indent=2) + "\n", encoding="utf-8")
    import_parts(read(source), engine=sqlite_engine)
    export("umwp", tmp_path / "out", engine=sqlite_engine)
    assert (tmp_path / "out" / "umwp.json").read_bytes() == source.read_bytes()


def test_a_file_with_the_real_umwp_quirks_round_trips_types_included(engine: Engine, tmp_path: Path) -> None:
    """Unanswerable records with a bare number as answer (as on line 2713 of the real
    StandardDataset.jsonl), a text answer, an unknown source and a missing key come back record for record."""
    source = write_jsonl(tmp_path / "StandardDataset.jsonl", QUIRKY)
    import_parts(read(source), engine=engine)
    export("umwp", tmp_path / "out", engine=engine)
    exported = [json.loads(line) for line in (tmp_path / "out" / source.name).read_text(encoding="utf-8").splitlines()]
    assert exported == QUIRKY
    assert [[(key, type(value)) for key, value in r.items()] for r in exported] == [
        [(key, type(value)) for key, value in r.items()] for r in QUIRKY
    ]
    assert (tmp_path / "out" / source.name).read_bytes() == source.read_bytes()
