"""Hostile files, whatever their format (annotator/import_export/formats/_io.py, `records.in_range`): a byte order mark
is accepted; a key twice, values nested too deep and integers out of range are one-line errors naming the file,
the record and the field, and an import of them stores nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Problem, Transcript
from annotator.import_export.formats import InputError, read
from annotator.import_export.importer import import_parts
from annotator.settings import limits

RECORD = {"data_id": "aime_0", "model": "m", "prompt": "reliable", "response": "\\boxed{1}"}


def _records(path: Path) -> list[object]:
    return [record for part in read(path) for record in part.records]


def _error(path: Path) -> str:
    with pytest.raises(InputError) as refused:
        _records(path)
    message = str(refused.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_byte_order_mark_is_accepted(tmp_path: Path, suffix: str) -> None:
    body = json.dumps(RECORD) + "\n" if suffix == ".jsonl" else json.dumps([RECORD])
    path = tmp_path / f"t{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    assert [r.data_id for r in _records(path)] == ["aime_0"]  # type: ignore[attr-defined]


def test_a_byte_order_mark_in_a_csv_is_not_part_of_the_first_column(tmp_path: Path) -> None:
    path = tmp_path / "sheet.csv"
    path.write_bytes(b"\xef\xbb\xbfdata_id,model,prompt,response\naime_0,m,reliable,x\n")
    assert [r.data_id for r in _records(path)] == ["aime_0"]  # type: ignore[attr-defined]


def test_a_key_twice_names_file_record_and_key(tmp_path: Path) -> None:
    lines = tmp_path / "t.jsonl"
    lines.write_text(json.dumps(RECORD) + '\n{"data_id": "a", "model": "m", "model": "n"}\n', encoding="utf-8")
    assert _error(lines) == f"{lines}: line 2: field 'model': the key 'model' appears twice"
    array = tmp_path / "t.json"
    array.write_text(f'[{json.dumps(RECORD)}, {json.dumps(RECORD)},\n {{"x": {{"k": 1, "k": 2}}}}]', encoding="utf-8")
    assert _error(array) == f"{array}: record 3: field 'k': the key 'k' appears twice"


@pytest.mark.parametrize("depth", [limits.JSON_DEPTH + 1, 200_000])
def test_values_nested_too_deep_are_refused(tmp_path: Path, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(RECORD)[:-1] + f', "params": {nested}}}\n', encoding="utf-8")
    message = _error(path)
    assert message.startswith(f"{path}: line 1: ")
    assert message.endswith(f"nested deeper than {limits.JSON_DEPTH} levels")


def test_nesting_within_the_limit_is_kept(tmp_path: Path) -> None:
    nested = "[" * (limits.JSON_DEPTH - 2) + "]" * (limits.JSON_DEPTH - 2)
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(RECORD)[:-1] + f', "params": {{"x": {nested}}}}}\n', encoding="utf-8")
    assert len(_records(path)) == 1


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"sample": 2**40}, "field 'sample': sample must be a whole number from 0 to 100,000, got 1099511627776"),
        ({"sample": -1}, "field 'sample': expected a whole number >= 0, got -1"),
        ({"prompt_tokens": 2**31}, "field 'prompt_tokens': prompt_tokens must be a whole number from 0 to"),
    ],
)
def test_transcript_integers_out_of_range(tmp_path: Path, fields: dict[str, int], expected: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(RECORD | fields) + "\n", encoding="utf-8")
    assert f"{path}: line 1: {expected}" in _error(path)


@pytest.mark.parametrize(
    ("data_id", "expected"),
    [
        ("aime_99999999999_remove_1", "the problem's position must be a whole number from 0 to 2,147,483,647"),
        ("aime_9_remove_123456789", "the condition number k must be a whole number from 1 to 10,000"),
    ],
)
def test_positions_inside_data_ids_out_of_range_store_nothing(
    engine: Engine, tmp_path: Path, data_id: str, expected: str
) -> None:
    unsol = tmp_path / "unsol" / "aime.json"
    unsol.parent.mkdir()
    solve = tmp_path / "solve" / "aime.json"
    solve.parent.mkdir()
    solve.write_text(json.dumps([{"data_source": "aime", "id": 0, "question": "q", "ground_truth": "1"}]))
    unsol.write_text(json.dumps([{"data_id": data_id, "question": "q", "rewritten_question": "r",
                                  "ground_truth": "1", "difficulty_eval": 0}]), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        import_parts([*read(solve), *read(unsol)], engine=engine)
    assert str(refused.value).startswith(f"{unsol}: record 1: field 'data_id': {expected}, got ")
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar() == 0
        assert session.execute(select(func.count()).select_from(Transcript)).scalar() == 0


def test_a_json_file_too_large_to_read_whole_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(limits.MAX_JSON_BYTES + 1)  # sparse: nothing is written, the size is real
    assert _error(path) == (
        f"{path}: is {limits.MAX_JSON_BYTES + 1:,} bytes; a file read whole may be at most "
        f"{limits.MAX_JSON_BYTES:,} bytes (split it, or use JSONL, which is streamed)"
    )


def test_a_jsonl_line_too_long_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    with path.open("wb") as handle:
        handle.write((json.dumps(RECORD) + "\n").encode())
        handle.truncate(handle.tell() + limits.MAX_LINE_BYTES + 10)
    assert _error(path) == f"{path}: line 2: is longer than {limits.MAX_LINE_BYTES:,} bytes"


def test_every_reader_counts_records_from_one_lines_for_jsonl_rows_for_sheets(tmp_path: Path) -> None:
    """A JSON array's first record is record 1, a JSONL file's lines and a sheet's rows are numbered as an editor
    or a spreadsheet shows them (a CSV header is row 1; a cell over two lines is one row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from annotator.import_export.formats import _io

    array = tmp_path / "a.json"
    array.write_text(json.dumps([{"x": 1}, {"x": 2}]), encoding="utf-8")
    assert [loc.record for loc, _ in _io.rows(array)] == ["record 1", "record 2"]
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"x": 1}\n\n{"x": 2}\n', encoding="utf-8")
    assert [loc.record for loc, _ in _io.rows(lines)] == ["line 1", "line 3"]
    sheet = tmp_path / "a.csv"
    sheet.write_text('x,y\n"two\nlines",1\n\n3,4\n', encoding="utf-8")
    assert [(loc.record, row) for loc, row in _io.rows(sheet)] == [
        ("row 2", {"x": "two\nlines", "y": "1"}), ("row 4", {"x": "3", "y": "4"})
    ]
    short = tmp_path / "short.csv"
    short.write_text("x,y\n1\n1,2,3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"short\.csv: row 3: has more cells than the header has columns"):
        list(_io.rows(short))
    assert next(_io.rows(short))[1] == {"x": "1", "y": None}
    table = tmp_path / "a.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), table)
    assert [loc.record for loc, _ in _io.rows(table)] == ["row 1", "row 2"]


def test_a_json_array_is_detected_by_its_first_record_and_a_later_bad_one_refused_when_read(tmp_path: Path) -> None:
    """Detection decodes only a JSON array's first record (the reader parses the whole file): a key twice or
    broken JSON further on is still refused, naming the file and the record, and nothing is stored."""
    array = tmp_path / "t.json"
    array.write_text(f'[{json.dumps(RECORD)},\n {{"data_id": "a", "model": "m", "model": "n"}}]', encoding="utf-8")
    assert _error(array) == f"{array}: record 2: field 'model': the key 'model' appears twice"
    array.write_text(f"[{json.dumps(RECORD)},\n {json.dumps(RECORD)[:-3]}]", encoding="utf-8")
    assert _error(array).startswith(f"{array}: invalid JSON: ")


def test_a_json_array_record_nested_too_deep_is_named(tmp_path: Path) -> None:
    """The array's depth is looked at once; the first record too deep is then named (the array is level 1)."""
    path = tmp_path / "t.json"
    within = "[" * (limits.JSON_DEPTH - 1) + "]" * (limits.JSON_DEPTH - 1)
    path.write_text(json.dumps([{**RECORD, "params": {"x": json.loads(within[1:-1] or "[]")}}]), encoding="utf-8")
    assert len(_records(path)) == 1
    deep = "[" * limits.JSON_DEPTH + "]" * limits.JSON_DEPTH
    path.write_text(f'[{json.dumps(RECORD)}, {json.dumps(RECORD)[:-1]}, "params": {deep}}}]', encoding="utf-8")
    assert _error(path) == f"{path}: record 2: values are nested deeper than {limits.JSON_DEPTH} levels"
