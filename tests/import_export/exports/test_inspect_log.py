"""`export --format inspect` (issue 20 item 4): Inspect AI eval logs that inspect_ai itself lists and reads
(`list_eval_logs`, `read_eval_log`), and that our Inspect importer reads back as the same transcripts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, delete, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript
from annotator.import_export import exports
from annotator.import_export.formats import detect, read_all
from annotator.import_export.importer import import_parts
from tests.support.transcripts import import_records

COLUMNS = ("data_id", "model", "prompt", "sample", "response", "reasoning", "params", "finish_reason", "prompt_tokens",
           "completion_tokens", "judge", "judge_class", "extracted_answer")
QUESTION_0 = "Every morning Aya goes for a $9$-kilometer-long walk"


@pytest.fixture
def answered(engine: Engine, shared_data: Path, tmp_path: Path) -> Engine:
    """AIME's problems and candidates, and answers of two models under two prompts, one reviewed by a human."""
    release = shared_data / "reliablemath"
    import_parts(read_all([release / "solve" / "aime.json", release / "unsol" / "aime.json"]), engine=engine)
    base = {"model": "deepseek/r1", "prompt": "reliable"}
    import_records(engine, tmp_path / "answers.jsonl", [
        base | {"data_id": "aime_0", "response": "So \\boxed{204}.", "reasoning": "She walks 3 km/h.",
                "params": {"temperature": 0.6, "max_tokens": 4096}, "finish_reason": "stop", "prompt_tokens": 180,
                "completion_tokens": 900},
        base | {"data_id": "aime_0", "sample": 1, "response": "Cut off at \\boxed{20", "finish_reason": "length"},
        base | {"data_id": "aime_9_remove_1", "response": "It is \\boxed{unsolvable}."},
        base | {"data_id": "aime_9_remove_1", "prompt": "standard_prompt", "response": "\\boxed{113}"},
        {"data_id": "aime_9_remove_1", "model": "gpt-4o", "prompt": "reliable", "response": ""},
    ])
    with write_session(engine) as session:
        session.execute(update(Transcript).where(Transcript.model == "gpt-4o").values(
            human="R", tags=["refused"], comment="said nothing"))
    return engine


def _transcripts(engine: Engine) -> list[dict[str, Any]]:
    with read_session(engine) as session:
        rows = session.execute(select(*(getattr(Transcript, c) for c in COLUMNS)))
        return sorted((row._asdict() for row in rows), key=lambda r: (r["model"], r["prompt"], r["data_id"],
                                                                        r["sample"]))


def test_inspect_reads_the_logs_one_per_model_and_prompt(answered: Engine, tmp_path: Path) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    out = tmp_path / "logs"
    manifest = exports.export("inspect", out, engine=answered)
    files = sorted(manifest["files"])
    assert len(files) == 3 and sum(entry["records"] for entry in manifest["files"].values()) == 5
    # Inspect lists a .json log only under its own file naming ({timestamp}_{task}_...).
    assert sorted(Path(info.name).name for info in list_eval_logs(str(out))) == files
    logs = {(log.eval.model, log.eval.task): log for log in (read_eval_log(str(out / name)) for name in files)}
    assert sorted(logs) == [("deepseek/r1", "reliable"), ("deepseek/r1", "standard_prompt"), ("gpt-4o", "reliable")]
    log = logs[("deepseek/r1", "reliable")]
    assert log.status == "success" and log.version == 2 and log.eval.metadata == {"prompt": "reliable",
                                                                                   "exported_by": "annotator"}
    assert [(s.id, s.epoch) for s in log.samples] == [("aime_0", 1), ("aime_0", 2), ("aime_9_remove_1", 1)]
    first = log.samples[0]
    assert isinstance(first.input, str) and first.input.startswith(QUESTION_0) and first.target == "204"
    assert [m.role for m in first.messages] == ["user", "assistant"] and first.messages[0].text == first.input
    assert first.output.completion == "So \\boxed{204}." and first.output.choices[0].stop_reason == "stop"
    assert (first.output.usage.input_tokens, first.output.usage.output_tokens) == (180, 900)
    assert first.scores["verdict"].value == "S" and first.scores["verdict"].answer == "204"
    assert log.samples[1].output.choices[0].stop_reason == "max_tokens"  # "length", kept in the metadata
    unsolvable = log.samples[2]
    assert unsolvable.target == "unsolvable" and unsolvable.metadata["original_answer"] == "113"
    assert unsolvable.metadata["rewrite_type"] == "remove" and unsolvable.scores["verdict"].value == "S"
    (metric,) = log.results.scores
    assert {name: m.value for name, m in metric.metrics.items()} == {"S": 2 / 3, "R": 0.0, "F": 1 / 3}
    reviewed = logs[("gpt-4o", "reliable")].samples[0]
    assert reviewed.scores["verdict"].value == "R"  # the human's verdict, over the judge's F
    assert (reviewed.metadata["judge"], reviewed.metadata["human"], reviewed.metadata["tags"]) == ("F", "R",
                                                                                                   ["refused"])
    header = read_eval_log(str(out / files[0]), header_only=True)
    assert header.samples is None and header.results.total_samples in (1, 3)


def test_the_logs_import_back_as_the_same_transcripts(answered: Engine, tmp_path: Path) -> None:
    before = _transcripts(answered)
    manifest = exports.export("inspect", tmp_path / "logs", engine=answered)
    paths = [tmp_path / "logs" / name for name in sorted(manifest["files"])]
    assert {detect(path) for path in paths} == {"inspect_log"}
    with write_session(answered) as session:
        session.execute(delete(Transcript))
    import_parts(read_all(paths), engine=answered)
    assert _transcripts(answered) == before


def test_file_names_keep_to_inspects_pattern(answered: Engine, tmp_path: Path) -> None:
    with write_session(answered) as session:
        session.execute(update(Transcript).where(Transcript.model == "gpt-4o").values(model="org/odd_model name"))
    manifest = exports.export("inspect", tmp_path / "logs", engine=answered)
    for name in manifest["files"]:
        parts = name.removesuffix(".json").split("_")
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\+00-00", parts[0]) and len(parts) == 4, name
    text = json.loads((tmp_path / "logs" / "manifest.json").read_text(encoding="utf-8"))
    assert text["format"] == "inspect"
