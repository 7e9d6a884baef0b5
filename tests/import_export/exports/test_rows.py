"""The one table writer (`annotator.import_export.exports.rows.write_table`): the same rows give the same cells in
JSONL, CSV and Parquet; CSV cells a spreadsheet would run are defused; Parquet keeps its types and row groups."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from annotator._util.csv_cells import restore
from annotator.import_export.exports.rows import PARQUET_BATCH, write_table

COLUMNS = {"name": "string", "count": "int", "share": "float", "gold": "bool", "at": "time"}
AT = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)


def _rows() -> list[dict[str, Any]]:
    return [
        {"name": "=HYPERLINK(\"x\")", "count": 3, "share": 0.5, "gold": True, "at": AT},
        {"name": "Ünïcode ∑", "count": None, "share": None, "gold": False, "at": None},
    ]


def test_jsonl_writes_each_row_as_json_dumps_would_with_times_as_iso(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert write_table(path, _rows(), file_format="jsonl", columns=COLUMNS) == 2
    expected = [{**row, "at": row["at"].isoformat() if row["at"] else None} for row in _rows()]
    assert path.read_text(encoding="utf-8") == "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in expected)


def test_jsonl_splices_json_text_after_the_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    rows = [{"id": 1, "truth": '{"a": [1, 2]}', "source": None}, {"id": 2, "truth": '"8"', "source": "7"}]
    write_table(path, rows, file_format="jsonl", json_text=("source", "truth"))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines == ['{"id": 1, "source": null, "truth": {"a": [1, 2]}}', '{"id": 2, "source": 7, "truth": "8"}']


def test_csv_has_the_columns_in_order_booleans_and_times_as_text_and_defused_formulas(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    assert write_table(path, _rows(), file_format="csv", columns=COLUMNS) == 2
    with path.open(encoding="utf-8", newline="") as handle:
        read = list(csv.reader(handle))
    assert read[0] == list(COLUMNS)
    assert read[1] == ["'=HYPERLINK(\"x\")", "3", "0.5", "true", AT.isoformat()]
    assert read[2] == ["Ünïcode ∑", "", "", "false", ""]
    assert restore(read[1][0]) == _rows()[0]["name"]


def test_an_empty_csv_still_has_its_header(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    assert write_table(path, [], file_format="csv", columns=COLUMNS) == 0
    assert path.read_bytes() == b"name,count,share,gold,at\r\n"


def test_parquet_keeps_types_and_writes_full_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    rows = [{**_rows()[i % 2], "count": i} for i in range(PARQUET_BATCH * 2)]
    assert write_table(path, iter(rows), file_format="parquet", columns=COLUMNS) == len(rows)
    table = pq.read_table(path)
    assert [str(field.type) for field in table.schema] == ["string", "int64", "double", "bool",
                                                          "timestamp[us, tz=UTC]"]
    assert table.to_pylist()[:2] == [{**rows[0]}, {**rows[1]}]
    # Two full groups and no empty one after them.
    assert [pq.ParquetFile(path).metadata.row_group(i).num_rows for i in range(2)] == [PARQUET_BATCH] * 2
    assert pq.ParquetFile(path).metadata.num_row_groups == 2


def test_an_empty_parquet_file_keeps_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    assert write_table(path, [], file_format="parquet", columns=COLUMNS) == 0
    table = pq.read_table(path)
    assert table.num_rows == 0 and table.schema.names == list(COLUMNS)


def test_a_table_file_needs_its_columns_and_a_known_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="a csv file needs its columns"):
        write_table(tmp_path / "t.csv", _rows(), file_format="csv")
    with pytest.raises(ValueError, match="unknown file format 'xlsx'; choose one of jsonl, csv, parquet"):
        write_table(tmp_path / "t.xlsx", _rows(), file_format="xlsx", columns=COLUMNS)


def test_a_value_json_cannot_hold_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        write_table(tmp_path / "t.jsonl", [{"tags": {"a"}}], file_format="jsonl")
