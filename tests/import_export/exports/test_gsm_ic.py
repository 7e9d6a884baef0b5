"""The GSM-IC export: each imported file written back record for record, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Candidate, Problem
from annotator.import_export.exports import export, nothing_to_write
from annotator.import_export.formats import detect, read
from annotator.import_export.importer import import_parts
from tests.support.cli import run_cli
from tests.support.gsm_ic_records import ORIGINAL, OWN_ROWS, real_rows


def test_gsm_ic_round_trips_record_for_record(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    rows = real_rows(shared_data) + OWN_ROWS
    assert len(rows) >= 7
    source = tmp_path / "GSM-IC_2step.json"
    source.write_text(json.dumps(rows, indent=4), encoding="utf-8")
    assert detect(source) == "gsm_ic"
    summary = import_parts(read(source), engine=engine)
    assert summary.candidates_added == len(rows)
    assert summary.problems_added == len({r["original_question"] for r in rows})
    export("gsm_ic", tmp_path / "out", engine=engine)
    exported = json.loads((tmp_path / "out" / source.name).read_text(encoding="utf-8"))
    assert exported == rows
    assert [list(r) for r in exported] == [list(r) for r in rows]
    assert (tmp_path / "out" / source.name).read_bytes() == source.read_bytes()


def test_records_become_distractor_candidates(sqlite_engine: Engine, tmp_path: Path) -> None:
    source = tmp_path / "GSM-IC_mstep.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in OWN_ROWS), encoding="utf-8")
    import_parts(read(source), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        problem = session.execute(select(Problem)).scalar_one()
        candidates = list(session.execute(select(Candidate).order_by(Candidate.position)).scalars())
    assert problem.data_source == "gsm_ic-mstep" and problem.question == ORIGINAL and problem.ground_truth == "14"
    assert [c.data_id for c in candidates] == ["gsm_ic-mstep_0_distractor_1", "gsm_ic-mstep_0_distractor_2"]
    assert all(c.rewrite_type == "distractor" for c in candidates)
    assert candidates[0].rewritten_condition == "Kim's mother plants 20 more potatoes."
    assert candidates[1].extra["gsm_ic"]["fields"]["number_label"] == "out_range"
    export("gsm_ic", tmp_path / "out", engine=sqlite_engine)
    assert (tmp_path / "out" / source.name).read_bytes() == source.read_bytes()


def test_data_fields_of_any_json_type_round_trip_and_are_named(engine: Engine, tmp_path: Path) -> None:
    """Answers, numbers and labels keep the JSON type a real file gives them, record for record."""
    rows = [
        {**OWN_ROWS[0], "answer": 14, "n_steps": "2"},
        {**OWN_ROWS[1], "answer": 14, "number": 1000, "role": ["Emma"]},
    ]
    source = tmp_path / "GSM-IC_2step.json"
    source.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    summary = import_parts(read(source), engine=engine)
    assert summary.oddities == [
        "GSM-IC_2step.json: 2 answers that are not text, kept as given",
        "GSM-IC_2step.json: 2 records with n_steps not a whole number or a role, number, template or label not "
        "text, kept as given",
    ]
    export("gsm_ic", tmp_path / "out", engine=engine)
    assert (tmp_path / "out" / source.name).read_bytes() == source.read_bytes()


def test_an_imported_file_is_something_to_export_under_either_name(sqlite_url: str, tmp_path: Path) -> None:
    """`gsm_ic` is the one name, read and written; `gsm-ic` is its alias everywhere. An imported file with no
    vetted distractor is something to export (the rule once looked for source files of format "gsm-ic", which
    no import ever stored, so the command line said "nothing to export")."""
    source = tmp_path / "GSM-IC_mstep.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in OWN_ROWS), encoding="utf-8")
    engine = get_engine(sqlite_url)
    import_parts(read(source, format="gsm-ic"), engine=engine)
    with read_session(engine) as session:
        assert nothing_to_write(session, "gsm_ic") is None and nothing_to_write(session, "gsm-ic") is None
    for name in ("gsm_ic", "gsm-ic"):
        out = tmp_path / name
        result = run_cli(sqlite_url, "export", "--format", name, "--out", str(out))
        assert result.returncode == 0, result.stderr
        assert (out / source.name).read_bytes() == source.read_bytes()
        assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["format"] == "gsm_ic"
