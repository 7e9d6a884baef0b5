"""`export --format labels` (issue 11, item 7): every annotator's every label, one row each, as JSONL, CSV or
Parquet, with the gold flag; `--with-history` adds every label event."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.database.models import GoldLabel
from annotator.import_export import exports
from annotator.labelling import queue
from tests.support.candidates import add_candidates, add_user

FIELDS = ["data_id", "annotator", "human_check", "difficulty_eval", "comment", "seconds_spent", "created_at",
          "updated_at", "gold"]
HISTORY = ["data_id", "annotator", "action", "at", "old_human_check", "old_difficulty_eval", "old_comment",
           "new_human_check", "new_difficulty_eval", "new_comment"]


def _label(engine: Engine, annotator_id: int, candidate_id: int, check: int, difficulty: int | None,
           comment: str | None = None, seconds: float | None = None) -> None:
    with write_session(engine) as session:
        queue.decide(session, annotator_id=annotator_id, candidate_id=candidate_id, human_check=check,
                     difficulty_eval=difficulty, comment=comment, seconds_spent=seconds)


@pytest.fixture
def labelled(engine: Engine) -> Engine:
    """ann and bob label math_0 (ann changes her mind); ann labels math_1, a gold item."""
    ids = add_candidates(engine, 3)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
    _label(engine, ann.id, ids[0], 1, 0, seconds=4.5)
    _label(engine, bob.id, ids[0], 0, None, comment="the \"condition\" is still there, ünïcode", seconds=12.0)
    _label(engine, ann.id, ids[0], 1, 1, comment="hard after all", seconds=2.0)
    _label(engine, ann.id, ids[1], 0, None)
    with write_session(engine) as session:
        session.add(GoldLabel(candidate_id=ids[1], human_check=0, difficulty_eval=None))
    return engine


EXPECTED = [
    ("math_0_remove_1", "ann", 1, 1, "hard after all", 6.5, False),
    ("math_0_remove_1", "bob", 0, None, "the \"condition\" is still there, ünïcode", 12.0, False),
    ("math_1_contradict_1", "ann", 0, None, None, None, True),
]
EXPECTED_HISTORY = [
    ("math_0_remove_1", "ann", "create", None, None, 1, 0),
    ("math_0_remove_1", "bob", "create", None, None, 0, None),
    ("math_0_remove_1", "ann", "update", 1, 0, 1, 1),
    ("math_1_contradict_1", "ann", "create", None, None, 0, None),
]


def _rows(path: Path, file_format: str) -> list[dict[str, object]]:
    if file_format == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if file_format == "parquet":
        return pq.read_table(path).to_pylist()
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _typed(value: object, file_format: str) -> object:
    """What a CSV cell says for a value (CSV has only text)."""
    if file_format != "csv":
        return value
    return "" if value is None else ("true" if value else "false") if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("file_format", ["jsonl", "csv", "parquet"])
def test_every_label_with_its_history(labelled: Engine, tmp_path: Path, file_format: str) -> None:
    manifest = exports.export("labels", tmp_path, engine=labelled,
                              options={"file_format": file_format, "with_history": True})
    assert manifest["options"] == {"file_format": file_format, "with_history": True}
    assert {name: entry["records"] for name, entry in manifest["files"].items()} == {
        f"labels.{file_format}": 3, f"label_history.{file_format}": 4
    }
    rows = _rows(tmp_path / f"labels.{file_format}", file_format)
    assert [list(row) for row in rows] == [FIELDS] * 3
    keys = ("data_id", "annotator", "human_check", "difficulty_eval", "comment", "seconds_spent", "gold")
    assert [tuple(row[k] for k in keys) for row in rows] == [
        tuple(_typed(value, file_format) for value in expected) for expected in EXPECTED
    ]
    for row in rows:
        created, updated = (
            (row[k] if isinstance(row[k], datetime) else datetime.fromisoformat(row[k]))  # type: ignore[arg-type]
            for k in ("created_at", "updated_at")
        )
        assert created.utcoffset() is not None and created.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        assert created <= updated
    # ann's first label on math_0 was changed later; bob's never was.
    assert rows[0]["created_at"] != rows[0]["updated_at"] and rows[1]["created_at"] == rows[1]["updated_at"]

    history = _rows(tmp_path / f"label_history.{file_format}", file_format)
    assert [list(row) for row in history] == [HISTORY] * 4
    keys = ("data_id", "annotator", "action", "old_human_check", "old_difficulty_eval", "new_human_check",
            "new_difficulty_eval")
    assert [tuple(row[k] for k in keys) for row in history] == [
        tuple(_typed(value, file_format) for value in expected) for expected in EXPECTED_HISTORY
    ]
    assert history[2]["new_comment"] == "hard after all"


def test_without_history_one_file(labelled: Engine, tmp_path: Path) -> None:
    manifest = exports.export("labels", tmp_path, engine=labelled)
    assert list(manifest["files"]) == ["labels.jsonl"] and "options" not in manifest
    assert not (tmp_path / "label_history.jsonl").exists()


def test_options_only_where_a_writer_takes_them(sqlite_engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(exports.UnknownExportFormat, match="the csv export takes no option file_format"):
        exports.export("csv", tmp_path / "out", engine=sqlite_engine, options={"file_format": "csv"})
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="unknown file format 'xlsx' for labels"):
        exports.export("labels", tmp_path / "out", engine=sqlite_engine, options={"file_format": "xlsx"})
