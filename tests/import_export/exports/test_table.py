"""Flat exports (JSONL, CSV, Parquet): what the database holds, read back into the same rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import Engine

from annotator.import_export.exports import export
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from tests.support.sheets import CHECK


@pytest.mark.parametrize("format", ["jsonl", "csv", "parquet"])
def test_flat_exports_round_trip(sqlite_engine: Engine, tmp_path: Path, format: str, sqlite_url: str) -> None:
    path = tmp_path / "math_check.json"
    path.write_text(json.dumps(CHECK), encoding="utf-8")
    import_parts(read(path), engine=sqlite_engine)
    manifest = export(format, tmp_path / "out", engine=sqlite_engine)
    (name,) = manifest["files"]
    exported = tmp_path / "out" / name
    assert manifest["files"][name]["records"] == 3
    if format == "parquet":
        table: pa.Table = pq.read_table(exported)
        assert table.schema.field("human_check").type == pa.int64()
    # The first export against what CHECK holds, not only against a second export of itself.
    rows = _records(exported)
    expected = {
        "math_0_remove_1": ("If $b = 3$, what is $a^b$?", "$a = 2$", "8", 11, None, None),
        "math_0_contradict_1": ("If $a = 2$, $a = 5$ and $b = 3$, what is $a^b$?", "$a = 5$", "8", 11, 0, None),
        "math_1_remove_1": ("What is $10 / d$?", "$d = 5$", "2", 12, 1, 1),
    }
    assert {r["data_id"] for r in rows} == set(expected)
    for row in rows:
        if format == "jsonl":
            ground_truth, source_id = row["ground_truth"], row["source_id"]
        else:  # CSV and Parquet cells hold the JSON text
            ground_truth, source_id = json.loads(row["ground_truth_json"]), json.loads(row["source_id_json"])
        cells = (row["human_check"], row["difficulty_eval"])
        if format == "csv":
            cells = tuple(int(c) if c else None for c in cells)
        question, condition, truth, source, human_check, difficulty = expected[row["data_id"]]
        assert (row["rewritten_question"], row["rewritten_condition"]) == (question, condition)
        assert (ground_truth, source_id, *cells) == (truth, source, human_check, difficulty)

    from annotator.database.engine import get_engine

    fresh = get_engine(f"sqlite:///{tmp_path / 'fresh.sqlite'}")
    summary = import_parts(read(exported), engine=fresh)
    assert summary.candidates_added == 3
    export(format, tmp_path / "again", engine=fresh)
    original = _records(exported)
    again = _records(tmp_path / "again" / name)
    keys = [
        "data_id",
        "data_source",
        "problem_position",
        "question",
        "rewrite_type",
        "condition_index",
        "rewritten_question",
        "rewritten_condition",
        "unsolvable_reason",
        "human_check",
        "difficulty_eval",
    ]
    assert [{k: r[k] for k in keys} for r in again] == [{k: r[k] for k in keys} for r in original]
    gt = "ground_truth" if format == "jsonl" else "ground_truth_json"
    assert [r[gt] for r in again] == [r[gt] for r in original]


def _records(path: Path) -> list[dict[str, object]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    return pq.read_table(path).to_pylist()
