"""Format detection: every kind of sample the format tests use is detected as it was before the registry,
including the precedence between formats whose shapes overlap, and the same errors for what is not a format."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotator.import_export.formats import InputError, detect, read
from tests.support.gsm_ic_records import OWN_ROWS
from tests.support.sheets import CHECK, sheet_rows
from tests.support.small_release import SOLVE, UNSOL
from tests.support.umwp_records import RECORDS

TREECUT_FILE = "qa_theme-food_compositeName_True_numVars-4_ansDepth-2_order-random_hallu-False_REP-500.jsonl"
TREECUT_RECORD = {"problem": "A burger costs $3. How much is a burger?", "answer": "3", "proof": "given"}
# A row of a flat export (jsonl, csv, parquet): what `export --format jsonl|csv|parquet` writes.
FLAT_ROW = {
    "data_id": "math_0_remove_1",
    "data_source": "math",
    "problem_position": 0,
    "question": "If $a = 2$ and $b = 3$, what is $a^b$?",
    "solution": None,
    "rewrite_type": "remove",
    "condition_index": 1,
    "extracted_condition": None,
    "rewritten_question": "If $b = 3$, what is $a^b$?",
    "rewritten_condition": "$a = 2$",
    "unsolvable_reason": "a is unknown",
    "status": "pending",
    "label_count": 0,
    "human_check": None,
    "difficulty_eval": None,
}


def _json(rows: list[dict]) -> Callable[[Path], None]:
    return lambda path: path.write_text(json.dumps(rows, indent=4), encoding="utf-8")


def _jsonl(rows: list[dict]) -> Callable[[Path], None]:
    return lambda path: path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _csv(rows: list[dict]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    return write


def _parquet(rows: list[dict]) -> Callable[[Path], None]:
    return lambda path: pq.write_table(pa.Table.from_pylist(rows), path)


FLAT_CELLS = dict(FLAT_ROW) | {"ground_truth_json": '"8"', "source_id_json": "11"}
EXCEL_ROW = {
    ("data_id" if k == "unsol_id" else "rewritten_condition:" if k == "rewritten_condition" else k): v
    for k, v in sheet_rows()[0].items()
} | {"solution": "3 + 4 = 7"}

# (file name, writer, the format detected before the registry)
FILES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "release solve file": ("solve.json", _json(SOLVE), "reliablemath"),
    "release unsol file": ("unsol.json", _json(UNSOL), "reliablemath"),
    "unsol records in JSONL": ("unsol.jsonl", _jsonl(UNSOL), "annotation"),
    "check file": ("math_check.json", _json(CHECK), "check"),
    "sheet json": ("sheet.json", _json(sheet_rows()), "annotation"),
    "sheet jsonl": ("sheet.jsonl", _jsonl(sheet_rows()), "annotation"),
    "sheet csv": ("sheet.csv", _csv(sheet_rows()), "annotation"),
    "excel-style sheet": ("excel.json", _json([EXCEL_ROW]), "annotation"),
    "problems in JSONL": ("problems.jsonl", _jsonl(SOLVE), "table"),
    "problems in CSV": ("problems.csv", _csv([{**r, "ground_truth": str(r["ground_truth"])} for r in SOLVE]), "table"),
    "flat export jsonl": ("candidates.jsonl", _jsonl([FLAT_ROW | {"ground_truth": "8", "source_id": 1}]), "annotation"),
    "flat export csv": ("candidates.csv", _csv([FLAT_CELLS]), "annotation"),
    "flat export parquet": ("candidates.parquet", _parquet([FLAT_CELLS]), "annotation"),
    "treecut jsonl": ("t.jsonl", _jsonl([TREECUT_RECORD]), "treecut"),
    "umwp jsonl": ("UMWP.jsonl", _jsonl(RECORDS), "umwp"),
    "umwp json": ("umwp.json", _json(RECORDS), "umwp"),
    "gsm-ic json": ("GSM-IC_2step.json", _json(OWN_ROWS), "gsm_ic"),
    "gsm-ic jsonl": ("GSM-IC_mstep.jsonl", _jsonl(OWN_ROWS), "gsm_ic"),
    # Shapes that overlap: the precedence stays as it was.
    "treecut record with solve fields": ("x.json", _json([TREECUT_RECORD | SOLVE[1]]), "treecut"),
    "umwp record with solve fields": ("x.json", _json([RECORDS[0] | SOLVE[1]]), "umwp"),
    "gsm-ic record with solve fields": ("x.json", _json([OWN_ROWS[0] | SOLVE[1]]), "gsm_ic"),
    "treecut record with umwp fields": ("x.jsonl", _jsonl([TREECUT_RECORD | RECORDS[0]]), "treecut"),
    "umwp record with gsm-ic fields": ("x.jsonl", _jsonl([RECORDS[0] | OWN_ROWS[0]]), "umwp"),
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_each_sample_file_is_detected_as_before(tmp_path: Path, case: str) -> None:
    name, write, expected = FILES[case]
    path = tmp_path / name
    write(path)
    assert detect(path) == expected


def test_directories_are_detected_as_before(tmp_path: Path, shared_data: Path) -> None:
    assert detect(shared_data / "reliablemath") == "reliablemath"
    assert detect(shared_data / "treecut") == "treecut"
    release = tmp_path / "release"
    (release / "unsol").mkdir(parents=True)
    assert detect(release) == "reliablemath"
    generated = tmp_path / "generated"
    generated.mkdir()
    shutil.copy(shared_data / "treecut" / TREECUT_FILE, generated / TREECUT_FILE)
    assert detect(generated) == "treecut"
    # A release directory that also holds TreeCut files is read as the release, as before.
    shutil.copy(shared_data / "treecut" / TREECUT_FILE, release / TREECUT_FILE)
    assert detect(release) == "reliablemath"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", "", "the file is empty"),
        ("empty.json", "[]", "holds no records"),
        ("other.jsonl", json.dumps({"foo": 1, "bar": 2}) + "\n", r"cannot tell the format from its fields \(bar, f"),
        ("notes.txt", "hello", "unsupported file type '.txt'"),
    ],
)
def test_what_is_no_format_is_reported_as_before(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        detect(path)


def test_missing_paths_and_other_directories_are_reported(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        detect(tmp_path / "nope.json")
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputError, match="is a directory but neither a ReliableMath release"):
        detect(tmp_path / "dir")


HEAD = 1 << 16  # what detection reads of a JSON file before it reads the whole


@pytest.mark.parametrize("shift", [-3, -2, -1, 0, 1, 2, 3])
@pytest.mark.parametrize(("piece", "ensure_ascii"), [("é", False), ("😀", False), ("é", True), (" ", False)])
def test_a_json_sheet_whose_first_record_crosses_the_head_is_detected(tmp_path: Path, shift: int, piece: str,
                                                                      ensure_ascii: bool) -> None:
    """A first record longer than the head, with a character of several bytes (or an escape) cut where the head
    ends, or leading whitespace longer than the head: detected as its fields say."""
    rows = sheet_rows()
    path = tmp_path / "sheet.json"
    if piece == " ":  # whitespace before the array: the head holds no record at all
        path.write_text(" " * (HEAD + shift) + json.dumps(rows), encoding="utf-8")
    else:
        # The question's characters end at the head's end (+ shift): one of them cut there, or its \u escape.
        lead = len(b'[{"question": "') + (len(json.dumps(piece)) - 2 if ensure_ascii else len(piece.encode()))
        rows[0] = {"question": "x" * (HEAD - lead + shift) + piece * 4} | {k: v for k, v in rows[0].items()
                                                                           if k != "question"}
        path.write_text(json.dumps(rows, ensure_ascii=ensure_ascii), encoding="utf-8")
    assert path.stat().st_size > HEAD
    assert detect(path) == "annotation"


def test_a_big_json_sheet_broken_past_the_head_is_refused_with_its_error(tmp_path: Path) -> None:
    """Detected from its start, a sheet whose bytes past the head are not UTF-8 is still refused, naming the byte."""
    path = tmp_path / "sheet.json"
    rows = sheet_rows() * (HEAD // 300 + 10)
    data = json.dumps(rows, ensure_ascii=False).encode()
    path.write_bytes(data[:-100] + b"\xff" + data[-99:])
    assert detect(path) == "annotation"
    with pytest.raises(InputError, match=r"is not valid UTF-8 \(byte"):
        [list(part.records) for part in read(path)]
