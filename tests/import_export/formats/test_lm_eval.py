"""lm-evaluation-harness per-sample logs (issue 20 item 4), read from files lm-eval itself wrote: `lm_eval run
--log_samples` with its dummy model answering from a script (tests/data/lm_eval/make_fixture.py says how).
Each answer becomes a transcript, judged on import; bad input names file, record and field and stores nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Transcript
from annotator.import_export.formats import InputError, ReadOptions, detect, read, read_all
from annotator.import_export.importer import import_parts
from tests.conftest import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "tests" / "data" / "lm_eval"
RUN = FIXTURE / "scripted-dummy"
RELIABLEMATH = next(RUN.glob("samples_reliablemath_aime_*.jsonl"))
PLAIN = next(RUN.glob("samples_aime_plain_*.jsonl"))
ID_MAP = FIXTURE / "aime_plain_map.csv"


def _stored(engine: Engine) -> list[dict[str, Any]]:
    columns = (Transcript.data_id, Transcript.model, Transcript.prompt, Transcript.sample, Transcript.response,
               Transcript.params, Transcript.source, Transcript.judge)
    with read_session(engine) as session:
        return [row._asdict() for row in session.execute(select(*columns).order_by(Transcript.id))]


def _import(path: Path, engine: Engine, **options: Any) -> None:
    import_parts(read(path, options=ReadOptions(**options)), engine=engine)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _copy(tmp_path: Path, source: Path = RELIABLEMATH, lines: list[dict[str, Any]] | None = None) -> Path:
    """The run's folder copied (samples and results side by side, as lm-eval leaves them), with new lines."""
    folder = tmp_path / "run"
    shutil.copytree(RUN, folder)
    path = folder / source.name
    if lines is not None:
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_fixture_is_lm_evals_own_output() -> None:
    """What the fixture holds is what lm-eval's sample writer writes (a guard against hand edits)."""
    lines = _lines(RELIABLEMATH)
    assert [(line["doc_id"], line["filter"]) for line in lines] == [(0, "boxed"), (1, "boxed"), (0, "whole"),
                                                                     (1, "whole")]
    assert set(lines[0]) >= {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                             "doc_hash", "prompt_hash", "target_hash", "exact_match"}
    assert lines[0]["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == 2048
    results = json.loads(next(RUN.glob("results_*.json")).read_text(encoding="utf-8"))
    assert results["lm_eval_version"] == "0.4.13" and results["model_name"] == "scripted-dummy"


def test_each_repeat_becomes_a_sample_judged_on_import(aime: Engine) -> None:
    assert detect(RELIABLEMATH) == "lm_eval"
    _import(RELIABLEMATH, aime)
    rows = _stored(aime)
    # Two docs x two repeats; the second filter's lines repeat the same answers and are not read again.
    assert [(r["data_id"], r["sample"], r["judge"]) for r in rows] == [
        ("aime_0", 0, "S"),  # \boxed{204}
        ("aime_0", 1, "F"),  # \boxed{200}
        ("aime_9_remove_1", 0, "F"),  # the original answer on an unsolvable item
        ("aime_9_remove_1", 1, "S"),  # \boxed{unsolvable}
    ]
    assert rows[1]["response"] == "So \\boxed{200}."  # the raw answer, not the filter's extract
    names = {(r["model"], r["prompt"], r["source"]) for r in rows}
    assert names == {("scripted-dummy", "reliablemath_aime", "lm_eval")}
    assert rows[0]["params"] == {"until": ["</s>"], "do_sample": False, "temperature": 0.0, "max_gen_toks": 2048}


def test_doc_ids_are_mapped_with_an_id_map_and_names_can_be_given(aime: Engine) -> None:
    _import(PLAIN, aime, id_map=ID_MAP, model="dummy-7b", prompt="plain")
    rows = _stored(aime)
    assert [(r["data_id"], r["model"], r["prompt"], r["sample"]) for r in rows] == [
        ("aime_0", "dummy-7b", "plain", 0), ("aime_1", "dummy-7b", "plain", 0), ("aime_2", "dummy-7b", "plain", 0)]
    assert [r["judge"] for r in rows] == ["S", "S", "F"]  # 204 and 25 (AIME 1: 025) are right; "I do not know."


def test_an_id_map_row_may_name_its_task(aime: Engine, tmp_path: Path) -> None:
    mapping = tmp_path / "map.jsonl"
    mapping.write_text(
        "".join(json.dumps(row) + "\n" for row in [
            {"task": "another_task", "doc_id": 0, "data_id": "aime_5"},
            {"task": "aime_plain", "doc_id": 0, "data_id": "aime_3"},
            {"doc_id": 1, "data_id": "aime_1"}, {"doc_id": 2, "data_id": "aime_2"},
        ]), encoding="utf-8")
    _import(PLAIN, aime, id_map=mapping)
    assert [r["data_id"] for r in _stored(aime)] == ["aime_3", "aime_1", "aime_2"]


def test_the_docs_own_id_field_can_be_named(aime: Engine, tmp_path: Path) -> None:
    lines = _lines(RELIABLEMATH)
    for line in lines:
        line["doc"]["uid"] = line["doc"].pop("data_id")
    path = _copy(tmp_path, lines=lines)
    with pytest.raises(InputError, match=r"line 1: field 'doc.data_id': the doc has no such field: name the doc's "
                                         r"id field with --id-field, or map doc_id with --id-map"):
        _import(path, aime)
    _import(path, aime, id_field="uid")
    assert [r["data_id"] for r in _stored(aime)] == ["aime_0", "aime_0", "aime_9_remove_1", "aime_9_remove_1"]


def test_without_its_results_file_the_model_must_be_given(aime: Engine, tmp_path: Path) -> None:
    path = _copy(tmp_path)
    next(path.parent.glob("results_*.json")).unlink()
    with pytest.raises(InputError, match=r"no results file of the same run beside it .*; give --model"):
        _import(path, aime)
    renamed = path.with_name("answers.jsonl")
    path.rename(renamed)
    with pytest.raises(InputError, match=r"answers.jsonl: cannot tell the task from the file name .* give --prompt"):
        _import(renamed, aime, model="m")
    import_parts(read(renamed, format="lm-eval", options=ReadOptions(model="m", prompt="p")), engine=aime)
    assert {(r["model"], r["prompt"]) for r in _stored(aime)} == {("m", "p")}


def test_the_model_comes_from_model_args_when_the_results_name_none(aime: Engine, tmp_path: Path) -> None:
    path = _copy(tmp_path)
    results = next(path.parent.glob("results_*.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    del data["model_name"]
    data["config"]["model_args"] = "pretrained=Qwen/Qwen2.5-Math-1.5B,dtype=bfloat16"  # as `--model_args` gives it
    results.write_text(json.dumps(data), encoding="utf-8")
    _import(path, aime)
    assert {r["model"] for r in _stored(aime)} == {"Qwen/Qwen2.5-Math-1.5B"}


def test_a_model_or_task_name_that_is_no_name_is_refused_naming_its_file(aime: Engine, tmp_path: Path) -> None:
    path = _copy(tmp_path)
    results = next(path.parent.glob("results_*.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    data["model_name"] = "scripted\x00dummy"
    results.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        _import(path, aime)
    assert str(caught.value) == (f"{results}: field 'model_name': the model 'scripted\\x00dummy' holds U+0000 (a "
                                 "control character) at character 9: names may not hold control, format or "
                                 "bidirectional characters; give --model")
    hostile = path.with_name(path.name.replace("reliablemath_aime", "reliable\u202emath"))
    path.rename(hostile)
    with pytest.raises(InputError, match=r"the task in the file name, 'reliable\\u202emath', holds U\+202E .*give "
                                         r"--prompt"):
        _import(hostile, aime, model="m")
    _import(hostile, aime, model="m", prompt="reliable")
    assert {(r["model"], r["prompt"]) for r in _stored(aime)} == {("m", "reliable")}


def _first(change: Any) -> list[dict[str, Any]]:
    lines = _lines(RELIABLEMATH)
    change(lines[1])
    return lines


BAD = [
    (lambda line: line.update(resps=[[[-1.5, False]]]), "line 2: field 'resps': expected generated text, got list"),
    (lambda line: line.update(resps=[["a"], ["b"]]), "line 2: field 'resps': expected one request's generated answers"),
    (lambda line: line.pop("doc_id"), "line 2: field 'doc_id': missing required field"),
    (lambda line: line.update(doc="aime_0"), "line 2: field 'doc': expected the doc as an object, got str"),
    (lambda line: line["doc"].update(data_id=["aime_0"]), "line 2: field 'doc.data_id': expected an id"),
    (lambda line: line["doc"].update(data_id="aime_9999"), "line 2: field 'data_id': 'aime_9999' names no item"),
    (lambda line: line["doc"].update(data_id="aime\u202e_0"), "line 2: field 'doc.data_id': 'aime\\u202e_0' holds "
                                                             "U+202E RIGHT-TO-LEFT OVERRIDE at character 5"),
    (lambda line: line["resps"][0].__setitem__(1, None), "line 2: field 'resps': expected generated text, got None"),
    (lambda line: line["doc"].update(data_id="aime_0"), "line 2: field 'data_id': duplicate transcript (data_id "
                                                        "'aime_0', model 'scripted-dummy', prompt 'reliablemath_aime', "
                                                        "sample 0): it already appears at"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_lines_name_file_line_and_field_and_store_nothing(
    aime: Engine, tmp_path: Path, change: Any, message: str
) -> None:
    path = _copy(tmp_path, lines=_first(change))
    with pytest.raises(InputError) as caught:
        _import(path, aime)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert _stored(aime) == []


def test_bad_id_maps_are_named(aime: Engine, tmp_path: Path) -> None:
    missing = tmp_path / "map.csv"
    missing.write_text("doc_id,data_id\n0,aime_0\n1,aime_1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3: field 'doc_id': doc_id 2 is not in the --id-map file"):
        _import(PLAIN, aime, id_map=missing)
    twice = tmp_path / "twice.csv"
    twice.write_text("doc_id,data_id\n0,aime_0\n0,aime_1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"twice.csv: row 3: field 'doc_id': doc_id '0' is mapped twice \(first at "
                                         r"row 2\)"):
        _import(PLAIN, aime, id_map=twice)
    with pytest.raises(InputError, match=r"nowhere.csv: no such file \(given as --id-map\)"):
        _import(PLAIN, aime, id_map=tmp_path / "nowhere.csv")
    assert _stored(aime) == []


def test_a_bad_file_among_good_ones_stores_nothing(aime: Engine, tmp_path: Path) -> None:
    bad = _copy(tmp_path, lines=_first(lambda line: line.update(resps="lol")))
    with pytest.raises(InputError, match=r"line 2: field 'resps'"):
        import_parts(read_all([PLAIN, bad], options=ReadOptions(id_map=ID_MAP)), engine=aime)
    with read_session(aime) as session:
        assert session.execute(select(func.count()).select_from(Transcript)).scalar() == 0
