"""OpenAI Batch API output files (issue 20 item 4). The fixture is built as the Batch API reference describes its
output lines, each body a ChatCompletion of the openai SDK's own types (tests/data/openai_batch/make_fixture.py):
no real batch ran. Failed requests are skipped and counted; bad lines name file, line and field and store
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import read_session
from annotator.database.models import Transcript
from annotator.import_export.formats import InputError, ReadOptions, detect, read
from annotator.import_export.importer import import_parts
from tests.conftest import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "tests" / "data" / "openai_batch" / "batch_output.jsonl"


def _stored(engine: Engine) -> list[dict[str, Any]]:
    columns = (Transcript.data_id, Transcript.model, Transcript.prompt, Transcript.sample, Transcript.response,
               Transcript.reasoning, Transcript.finish_reason, Transcript.prompt_tokens, Transcript.completion_tokens,
               Transcript.source, Transcript.judge)
    with read_session(engine) as session:
        return [row._asdict() for row in session.execute(select(*columns).order_by(Transcript.id))]


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def _import(path: Path, engine: Engine, **options: Any) -> str:
    return import_parts(read(path, options=ReadOptions(**options)), engine=engine).text()


def test_answers_are_stored_and_judged_and_failed_requests_counted(aime: Engine) -> None:
    assert detect(FIXTURE) == "openai_batch"
    summary = _import(FIXTURE, aime)
    rows = _stored(aime)
    assert [(r["data_id"], r["prompt"], r["sample"], r["judge"]) for r in rows] == [
        ("aime_0", "reliable", 0, "S"),
        ("aime_9_remove_1", "reliable", 0, "S"),
        ("aime_9_remove_1", "reliable", 1, "F"),  # the original answer on an unsolvable item
    ]
    assert {(r["model"], r["source"], r["finish_reason"]) for r in rows} == {
        ("gpt-4o-mini-2024-07-18", "openai_batch", "stop")}
    assert (rows[0]["prompt_tokens"], rows[0]["completion_tokens"]) == (180, 12)
    assert "3 transcripts added and judged" in summary
    assert f"{FIXTURE}: 2 failed requests (an error, or an HTTP status other than 200) skipped" in summary


def test_a_custom_id_without_a_prompt_needs_one_given(aime: Engine, tmp_path: Path) -> None:
    lines = _lines()[:1]
    lines[0]["custom_id"] = "aime_0"
    path = _write(tmp_path / "out.jsonl", lines)
    with pytest.raises(InputError, match=r"out.jsonl: line 1: field 'custom_id': 'aime_0' names no prompt: write "
                                         r"custom_ids as DATA_ID/PROMPT\[/SAMPLE\], or give --prompt"):
        _import(path, aime)
    _import(path, aime, prompt="standard", model="my-gpt")
    assert [(r["data_id"], r["model"], r["prompt"], r["sample"]) for r in _stored(aime)] == [
        ("aime_0", "my-gpt", "standard", 0)]


def _ok(custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"id": "batch_req_1", "custom_id": custom_id, "error": None,
            "response": {"status_code": 200, "request_id": "req_1", "body": body}}


def test_other_endpoints_and_several_choices(aime: Engine, tmp_path: Path) -> None:
    chat = {"object": "chat.completion", "model": "deepseek-reasoner", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": "\\boxed{204}", "reasoning_content": "She walks 3 km/h."}},
        {"index": 1, "finish_reason": "length", "message": {"role": "assistant", "content": None}},
    ], "usage": {"prompt_tokens": 10, "completion_tokens": 20}}
    completion = {"object": "text_completion", "model": "davinci-002",
                  "choices": [{"index": 0, "text": " \\boxed{204}", "finish_reason": "stop"}]}
    response = {"object": "response", "model": "o4-mini-2025-04-16", "status": "completed", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "No D is fixed."}]},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "It is \\boxed{unsolvable}.", "annotations": []}]},
    ], "usage": {"input_tokens": 30, "output_tokens": 40, "total_tokens": 70}}
    path = _write(tmp_path / "out.jsonl", [_ok("aime_0/reliable/2", chat), _ok("aime_0/reliable", completion),
                                           _ok("aime_9_remove_1/reliable", response)])
    _import(path, aime)
    rows = _stored(aime)
    assert [(r["model"], r["sample"], r["response"], r["reasoning"], r["finish_reason"]) for r in rows] == [
        ("deepseek-reasoner", 2, "\\boxed{204}", "She walks 3 km/h.", "stop"),
        ("deepseek-reasoner", 3, "", None, "length"),  # choice 1 of the request for sample 2
        ("davinci-002", 0, " \\boxed{204}", None, "stop"),
        ("o4-mini-2025-04-16", 0, "It is \\boxed{unsolvable}.", "No D is fixed.", "completed"),
    ]
    # The usage is the request's: with two choices it is no single answer's.
    assert [(r["prompt_tokens"], r["completion_tokens"]) for r in rows] == [(None, None), (None, None),
                                                                           (None, None), (30, 40)]
    assert [r["judge"] for r in rows] == ["S", "F", "S", "S"]


def test_an_input_file_is_refused_with_a_hint(aime: Engine, tmp_path: Path) -> None:
    request = {"custom_id": "aime_0/reliable", "method": "POST", "url": "/v1/chat/completions",
               "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Q"}]}}
    path = _write(tmp_path / "batch_input.jsonl", [request])
    assert detect(path) == "openai_batch"
    with pytest.raises(InputError, match=r"batch_input.jsonl: line 1: field 'response': is a request of a Batch API "
                                         r"input file; import the batch's output file"):
        _import(path, aime)


def _second(change: Any) -> list[dict[str, Any]]:
    lines = _lines()[:3]
    change(lines[1])
    return lines


def _body(line: dict[str, Any]) -> dict[str, Any]:
    return line["response"]["body"]


BAD = [
    (lambda line: line.update(custom_id=7), "field 'custom_id': expected DATA_ID[/PROMPT[/SAMPLE]], got 7"),
    (lambda line: line.update(custom_id="a/b/c/d"), "field 'custom_id': expected DATA_ID, DATA_ID/PROMPT or"),
    (lambda line: line.update(custom_id="aime_0//1"), "field 'custom_id': expected DATA_ID, DATA_ID/PROMPT or"),
    (lambda line: line.update(custom_id="aime_0/reliable/x"), "field 'custom_id': the sample (after the second '/') "
                                                              "must be a whole number, got 'x'"),
    (lambda line: line.pop("custom_id"), "field 'custom_id': missing required field"),
    (lambda line: line["response"].update(status_code="200"), "field 'response.status_code': expected an HTTP status"),
    (lambda line: line.update(response=[]), "field 'response': expected an object, got list"),
    (lambda line: line["response"].update(body="ok"), "field 'response.body': expected an object, got str"),
    (lambda line: _body(line).update(choices=[]), "field 'response.body.choices': expected a non-empty list"),
    (lambda line: _body(line)["choices"][0]["message"].update(content=["x"]),
     "field 'response.body.choices[0].message.content': expected text, got list"),
    (lambda line: _body(line).pop("model"), "field 'response.body.model': names no model; give --model"),
    (lambda line: _body(line)["usage"].update(prompt_tokens=-1),
     "field 'response.body.usage.prompt_tokens': expected a whole number >= 0, got -1"),
    # Names hold no control or bidirectional character, on SQLite as on PostgreSQL (which refuses NUL).
    (lambda line: line.update(custom_id="aime_0/reli\x00able\u202e"),
     "field 'custom_id': 'reli\\x00able\\u202e' holds U+0000 (a control character) at character 5: names may not "
     "hold control, format or bidirectional characters"),
    (lambda line: line.update(custom_id="aime\u202e_0/reliable"),
     "field 'custom_id': 'aime\\u202e_0' holds U+202E RIGHT-TO-LEFT OVERRIDE at character 5"),
    (lambda line: _body(line).update(model="gpt\u2067-4o"),
     "field 'response.body.model': 'gpt\\u2067-4o' holds U+2067 RIGHT-TO-LEFT ISOLATE at character 4"),
    (lambda line: line.update(custom_id="aime_999/reliable"), "field 'data_id': 'aime_999' names no item"),
    (lambda line: line.update(custom_id="aime_0/reliable/0"), "field 'data_id': duplicate transcript (data_id "
                                                              "'aime_0', model 'gpt-4o-mini-2024-07-18'"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_lines_name_file_line_and_field_and_store_nothing(
    aime: Engine, tmp_path: Path, change: Any, message: str
) -> None:
    path = _write(tmp_path / "out.jsonl", _second(change))
    with pytest.raises(InputError) as caught:
        _import(path, aime)
    assert str(caught.value).startswith(f"{path}: line 2: {message}")
    assert _stored(aime) == []


def test_an_answer_with_content_null_is_stored_empty_and_counted(aime: Engine, tmp_path: Path) -> None:
    lines = _lines()[:3]
    _body(lines[1])["choices"][0]["message"]["content"] = None
    _body(lines[2])["choices"][0]["message"]["content"] = ""
    path = _write(tmp_path / "out.jsonl", lines)
    summary = _import(path, aime)
    assert f"{path}: 2 answers with no text (content null or empty) stored as empty answers" in summary
    rows = _stored(aime)
    assert [(r["data_id"], r["response"], r["judge"]) for r in rows][1:] == [
        ("aime_9_remove_1", "", "F"), ("aime_9_remove_1", "", "F")]
    again = _write(tmp_path / "again.jsonl", [lines[1] | {"custom_id": "aime_0/other"}])
    assert "1 answer with no text (content null or empty) stored as an empty answer" in _import(again, aime)


def test_a_name_given_as_an_option_replaces_the_files_and_is_checked_too(aime: Engine, tmp_path: Path) -> None:
    lines = _lines()[:1]
    lines[0]["custom_id"] = "aime_0/reli\x00able"
    path = _write(tmp_path / "out.jsonl", lines)
    with pytest.raises(ValueError, match=r"^--prompt 'p\\u202e' holds U\+202E"):
        _import(path, aime, prompt="p\u202e")
    _import(path, aime, prompt="standard")  # the custom_id's prompt is not used: only its data_id is a name here
    assert [(r["data_id"], r["prompt"]) for r in _stored(aime)] == [("aime_0", "standard")]
