"""GSM-IC in and out: originals as problems, new questions as distractor candidates, record for record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Candidate
from annotator.import_export.formats import InputError, read
from annotator.import_export.importer import import_parts
from tests.support.gsm_ic_records import OWN_ROWS


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"new_question": None}, "new_question", "expected text"),
        ({"answer": 14}, "answer", "14 differs from '14'"),
        ({"answer": "15"}, "answer", "differs from '14'"),
    ],
)
def test_bad_records_name_the_record_and_field(
    sqlite_engine: Engine, tmp_path: Path, change: dict, field: str, message: str
) -> None:
    rows = [dict(r) for r in OWN_ROWS]
    rows[1].update(change)
    source = tmp_path / "GSM-IC_2step.json"
    source.write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(InputError, match=message) as error:
        import_parts(read(source, format="gsm-ic"), engine=sqlite_engine)
    assert (error.value.record, error.value.field) == ("record 2", field)
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() == 0


def test_a_missing_original_question_is_reported(sqlite_engine: Engine, tmp_path: Path) -> None:
    rows = [dict(r) for r in OWN_ROWS]
    del rows[0]["original_question"]
    source = tmp_path / "GSM-IC_2step.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match="line 1: field 'original_question': missing required field"):
        import_parts(read(source, format="gsm_ic"), engine=sqlite_engine)
