"""`export --format transcripts`: one line per response with the judge's, the human's and the effective verdict."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, select, update

from annotator.database.engine import write_session
from annotator.database.models import Transcript
from annotator.import_export import exports
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from tests.support.transcripts import import_records, records_for

KEYS = ["data_id", "model", "prompt", "sample", "response", "extracted_answer", "judge_rule", "judge_class", "judge",
        "human", "verdict", "tags", "comment"]


def test_every_transcript_with_its_verdicts(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="m", prompt="reliable", a=(10, 0, 20), u=(40, 2, 90))
    import_records(engine, tmp_path / "m.jsonl", records)
    with write_session(engine) as session:
        first = session.execute(select(Transcript.id).order_by(Transcript.id).limit(1)).scalar_one()
        session.execute(update(Transcript).where(Transcript.id == first).values(
            human="F", tags=["answered the original question"], comment="the box hides a guess"))
    manifest = exports.export("transcripts", tmp_path / "out", engine=engine)
    lines = (tmp_path / "out" / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()
    assert manifest["files"]["transcripts.jsonl"]["records"] == len(lines) == 162
    rows = [json.loads(line) for line in lines]
    assert all(list(row) == KEYS for row in rows)
    assert [(r["data_id"], r["response"]) for r in rows] == [(r["data_id"], r["response"]) for r in records]
    head = rows[0]
    assert (head["judge"], head["human"], head["verdict"]) == ("S", "F", "F")
    assert head["tags"] == ["answered the original question"] and head["comment"] == "the box hides a guess"
    assert all(row["verdict"] == row["judge"] and row["human"] is None for row in rows[1:])
    assert {row["judge_rule"] for row in rows} == {"reliablemath"}
