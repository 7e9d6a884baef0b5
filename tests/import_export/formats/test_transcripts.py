"""Transcripts made elsewhere: JSONL records and Inspect AI logs, imported in the import's one
transaction and judged on import; bad records name file, record and field and store nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Transcript
from annotator.import_export.formats import InputError, detect, read
from annotator.import_export.importer import import_parts
from tests.support.inspect_logs import inspect_log

SOLVABLE = "aime_0"  # the first record of solve/aime.json
UNSOLVABLE = "aime_9_remove_1"


def _record(**fields: Any) -> dict[str, Any]:
    return {"data_id": SOLVABLE, "model": "gpt-4o", "prompt": "reliable", "response": "\\boxed{1}"} | fields


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")
    return path


def _import(path: Path, engine: Engine) -> None:
    import_parts(read(path), engine=engine)


def _stored(engine: Engine) -> list[dict[str, Any]]:
    columns = (Transcript.data_id, Transcript.sample, Transcript.reasoning, Transcript.params, Transcript.source,
               Transcript.extracted_answer, Transcript.judge_rule, Transcript.judge_class, Transcript.judge)
    with read_session(engine) as session:
        return [row._asdict() for row in session.execute(select(*columns).order_by(Transcript.id))]


def test_jsonl_transcripts_are_stored_and_judged_on_import(aime: Engine, tmp_path: Path) -> None:
    path = _write(tmp_path / "answers.jsonl", [
        _record(response="Thinking... so \\boxed{204}", reasoning="long thoughts", params={"temperature": 0}),
        _record(data_id=UNSOLVABLE, response="\\boxed{it\u2019s unsolvable}"),
        _record(data_id=UNSOLVABLE, sample=1, response="The tangents meet at D, so \\boxed{113}"),
    ])
    assert detect(path) == "transcripts"
    _import(path, aime)
    rows = _stored(aime)
    assert [(r["data_id"], r["sample"], r["extracted_answer"], r["judge_class"], r["judge"]) for r in rows] == [
        (SOLVABLE, 0, "204", "correct", "S"),
        (UNSOLVABLE, 0, "it\u2019s unsolvable", "unsolvable", "S"),
        (UNSOLVABLE, 1, "113", "correct", "F"),  # the original answer on an unsolvable item
    ]
    assert rows[0]["reasoning"] == "long thoughts" and rows[0]["params"] == {"temperature": 0}
    assert {r["judge_rule"] for r in rows} == {"reliablemath"} and {r["source"] for r in rows} == {"transcripts"}


BAD = [
    ({"data_id": "aime_9999"}, "line 2: field 'data_id': 'aime_9999' names no item"),
    ({"data_id": "aime_9_remove_99"}, "line 2: field 'data_id': 'aime_9_remove_99' names no item"),
    ({"response": None}, "line 2: field 'response': expected text, got NoneType"),
    ({"model": 4}, "line 2: field 'model': expected text, got int"),
    ({"sample": -1}, "line 2: field 'sample': expected a whole number >= 0"),
    ({"sample": "1"}, "line 2: field 'sample': expected a whole number >= 0"),
    ({"params": [0.7]}, "line 2: field 'params': expected an object"),
    ({"prompt": "p" * 101}, "line 2: field 'prompt': is 101 characters long; the limit is 100"),
    # Names hold no control or bidirectional character: refused alike on SQLite and PostgreSQL.
    ({"prompt": "reli\x00able"}, "line 2: field 'prompt': 'reli\\x00able' holds U+0000 (a control character) at "
                                 "character 5: names may not hold control, format or bidirectional characters"),
    ({"model": "gpt-4o\u202e"}, "line 2: field 'model': 'gpt-4o\\u202e' holds U+202E RIGHT-TO-LEFT OVERRIDE"),
    ({"data_id": "aime_\u20660"}, "line 2: field 'data_id': 'aime_\\u20660' holds U+2066 LEFT-TO-RIGHT ISOLATE"),
    ({}, "line 2: field 'data_id': duplicate transcript (data_id 'aime_0', model 'gpt-4o', prompt 'reliable', "
         "sample 0): it already appears at"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_records_name_file_record_and_field_and_store_nothing(
    aime: Engine, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path / "answers.jsonl", [_record(), _record(**change)])
    with pytest.raises(InputError) as caught:
        _import(path, aime)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert _stored(aime) == []


def test_a_missing_field_is_named(aime: Engine, tmp_path: Path) -> None:
    record = _record()
    del record["response"]
    path = _write(tmp_path / "answers.jsonl", [_record(sample=1), record])
    with pytest.raises(InputError, match=r"answers.jsonl: line 2: field 'response': missing required field"):
        import_parts(read(path, format="transcripts"), engine=aime)
    assert _stored(aime) == []


def test_a_transcript_already_in_the_database_is_refused(aime: Engine, tmp_path: Path) -> None:
    first = _write(tmp_path / "first.jsonl", [_record()])
    _import(first, aime)
    again = _write(tmp_path / "again.jsonl", [_record(sample=1), _record()])
    held = "the database already holds data_id 'aime_0', model 'gpt-4o', prompt 'reliable', sample 0"
    with pytest.raises(InputError, match=f"again.jsonl: line 2: field 'data_id': duplicate transcript: {held}"):
        _import(again, aime)
    assert [row["sample"] for row in _stored(aime)] == [0]



@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_inspect_log_becomes_transcripts(aime: Engine, tmp_path: Path, suffix: str) -> None:
    path = inspect_log(tmp_path / f"run{suffix}")
    assert detect(path) == "inspect_log"
    _import(path, aime)
    with read_session(aime) as session:
        rows = session.execute(
            select(Transcript.data_id, Transcript.model, Transcript.prompt, Transcript.sample, Transcript.response,
                   Transcript.reasoning, Transcript.params, Transcript.judge).order_by(Transcript.id)
        ).all()
    assert [tuple(row[:4]) for row in rows] == [
        (SOLVABLE, "deepseek/r1", "reliable", 0),  # data_id from the sample id, prompt from the task's metadata
        (UNSOLVABLE, "deepseek/r1", "standard", 1),  # from the sample's metadata; epoch 2 is sample 1
    ]
    assert rows[0].response == "So \\boxed{204}." and rows[0].reasoning == "Let me think."
    assert rows[0].params == {"temperature": 0.0, "max_tokens": 4096}
    assert [row.judge for row in rows] == ["S", "F"]


def test_an_inspect_logs_names_are_checked_and_the_logs_field_named(aime: Engine, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    path = inspect_log(tmp_path / "run.eval")
    log = read_eval_log(str(path))
    log.eval.model = "deepseek/\u202er1"
    write_eval_log(log, str(path))
    with pytest.raises(InputError, match=r"run.eval: sample 'aime_0' epoch 1: field 'eval.model': "
                                         r"'deepseek/\\u202er1' holds U\+202E RIGHT-TO-LEFT OVERRIDE"):
        _import(path, aime)
    log.eval.model = "deepseek/r1"
    assert log.samples is not None
    log.samples[1].metadata = {"data_id": UNSOLVABLE, "prompt": "std\x00"}
    write_eval_log(log, str(path))
    with pytest.raises(InputError, match=r"run.eval: sample 7 epoch 2: field 'metadata.prompt': 'std\\x00' holds "
                                         r"U\+0000"):
        _import(path, aime)
    assert _stored(aime) == []


def test_a_broken_inspect_log_is_named(aime: Engine, tmp_path: Path) -> None:
    path = tmp_path / "broken.eval"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match=r"broken.eval: is not a readable Inspect AI log"):
        _import(path, aime)
    with read_session(aime) as session:
        assert session.execute(select(func.count()).select_from(Transcript)).scalar() == 0
