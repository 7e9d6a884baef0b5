"""Writing an annotator's Excel batch with openpyxl: the sheet `annotator.import_export.formats.batch` reads back.

One sheet, `batch`: a bold frozen header, one candidate per row in `formats.batch.COLUMNS`, text wrapped
and aligned to the top, the label columns with 0/1 drop-down lists (with a note saying what 0 and 1 mean).
Custom document properties (File > Properties > Custom in Excel and LibreOffice): `annotator` (whose
labels the sheet holds; import reads it), `batch` (the claims' batch name) and `deadline` (when the claims
expire, UTC). Every cell is written as text or a number, never a formula: a problem starting with `=`
stays text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.packaging.custom import StringProperty
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from annotator.import_export.formats.batch import BATCH_PROPERTY, COLUMNS, DEADLINE_PROPERTY, LABEL_COLUMNS, PROPERTY

_TO_FILL = (*LABEL_COLUMNS, "comment")
# Excel refuses longer cells; the app shows the whole text.
MAX_CELL_CHARS = 32_767
_WIDTHS = {
    "data_id": 26,
    "question": 60,
    "ground_truth": 14,
    "solution": 50,
    "rewritten_question": 60,
    "rewritten_condition": 30,
    "unsolvable_reason": 40,
    "human_check": 13,
    "difficulty_eval": 14,
    "comment": 30,
}
_PROMPTS = {
    "human_check": "1 = an acceptable unsolvable problem (exactly that condition changed, still a math problem); "
    "0 = not acceptable",
    "difficulty_eval": "Only when human_check is 1: 0 = simple to see it is unsolvable, 1 = hard",
}


def cell_value(value: Any) -> Any:
    """A value as a cell holds it: numbers stay numbers; text loses the control characters Excel cannot
    store and is cut at Excel's cell limit; other JSON values (a list ground truth) become JSON text."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = ILLEGAL_CHARACTERS_RE.sub("", text)
    if len(text) > MAX_CELL_CHARS:
        note = f" … [cut: {len(text):,} characters, see the app]"
        text = text[: MAX_CELL_CHARS - len(note)] + note
    return text


def write_batch(
    path: Path, *, annotator: str, candidates: Sequence[dict[str, Any]], batch: str, deadline: datetime
) -> None:
    """Write `candidates` (rows with the fields of `COLUMNS`, labels empty) as `annotator`'s sheet at `path`."""
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "batch"
    sheet.append(list(COLUMNS))
    wrap = Alignment(wrap_text=True, vertical="top")
    for row_number, candidate in enumerate(candidates, start=2):
        for column, name in enumerate(COLUMNS, start=1):
            # The label cells start empty, whatever the candidate's resolved label so far.
            value = None if name in _TO_FILL else cell_value(candidate.get(name))
            cell = sheet.cell(row=row_number, column=column, value=value)
            if cell.data_type == "f":  # text that starts with "=" is text, not a formula
                cell.data_type = "s"
            cell.alignment = wrap
    bold = Font(bold=True)
    for column, name in enumerate(COLUMNS, start=1):
        sheet.cell(row=1, column=column).font = bold
        sheet.column_dimensions[get_column_letter(column)].width = _WIDTHS[name]
    sheet.freeze_panes = "A2"
    last = max(len(candidates) + 1, 2)
    for name, prompt in _PROMPTS.items():
        letter = get_column_letter(COLUMNS.index(name) + 1)
        validation = DataValidation(
            type="list", formula1='"0,1"', allow_blank=True, showErrorMessage=True, errorTitle=name,
            error="Enter 0 or 1", promptTitle=name, prompt=prompt, showInputMessage=True,
        )
        validation.add(f"{letter}2:{letter}{last}")
        sheet.add_data_validation(validation)
    workbook.properties.title = f"{annotator}'s batch {batch}"
    for name, value in ((PROPERTY, annotator), (BATCH_PROPERTY, batch), (DEADLINE_PROPERTY, deadline.isoformat())):
        workbook.custom_doc_props.append(StringProperty(name=name, value=value))
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(path)
