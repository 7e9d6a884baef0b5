"""An annotator's Excel batch (`python -m annotator batches`), filled in and read back as their labels.

The sheet has the columns the ReliableMath authors' Excel sheets had (`COLUMNS`) plus a `comment` column,
a header row, one candidate per row. Only `human_check`, `difficulty_eval` and `comment` are read back: the
other cells are there for the annotator to read, and the candidates must already be in the database (an
unknown `data_id` is an error). A row whose label cells are empty is not labelled yet: it is skipped and
counted. Whose labels they are: the workbook's custom document property `annotator` (`PROPERTY`), else the
file name without `.xlsx`; `--annotator` overrides both. That annotator must have an account.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator._util.files import sha256_file
from annotator.import_export.formats import _io
from annotator.import_export.formats.reliablemath import candidate_from
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    InputError,
    Location,
    ReadOptions,
    SourceFileInfo,
    optional_str,
    parse_data_id,
    parse_label,
)

# The authors' sheet layout, then our comment column; `batches` writes these, in this order.
COLUMNS = (
    "data_id",
    "question",
    "ground_truth",
    "solution",
    "rewritten_question",
    "rewritten_condition",
    "unsolvable_reason",
    "human_check",
    "difficulty_eval",
    "comment",
)
LABEL_COLUMNS = ("human_check", "difficulty_eval")
# Custom document properties of a batch workbook.
PROPERTY = "annotator"
BATCH_PROPERTY = "batch"
DEADLINE_PROPERTY = "deadline"


def sniff(path: Path) -> bool:
    """An .xlsx file whose header has a data_id and the label columns."""
    if path.is_dir() or path.suffix.lower() != ".xlsx":
        return False
    sample = _io.first_row(path)
    return sample is not None and "data_id" in sample


def properties(workbook: Any) -> dict[str, Any]:
    """A workbook's custom document properties by name."""
    return {prop.name: prop.value for prop in workbook.custom_doc_props}


def annotator_of(path: Path, workbook: Any, options: ReadOptions) -> str:
    """Whose labels a batch holds: `--annotator`, else the workbook's `annotator` property, else the file name."""
    named = options.annotator or properties(workbook).get(PROPERTY)
    return str(named).strip() if named not in (None, "") else path.stem


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    workbook = _io.open_xlsx(path)
    annotator = annotator_of(path, workbook, options)
    header = next(workbook.worksheets[0].iter_rows(max_row=1, values_only=True), ())
    missing = [name for name in ("data_id", *LABEL_COLUMNS) if name not in {str(h).strip() for h in header if h}]
    if missing:
        workbook.close()
        raise InputError(str(path), f"the header has no {', '.join(missing)} column (is this a batch sheet?)")
    info = SourceFileInfo("batch", path.name, "batch", sha256_file(path), {"annotator": annotator})

    def records() -> Iterator[CandidateRecord]:
        for loc, obj in _io.xlsx_rows(path, workbook):
            yield _label_row(obj, loc, annotator=annotator)

    return [ImportPart(str(path), records(), info)]


def _label_row(obj: dict[str, Any], loc: Location, *, annotator: str) -> CandidateRecord:
    if "data_id" not in obj:
        raise loc.error("is empty", "data_id")
    data_id = parse_data_id(str(obj["data_id"]).strip(), loc)
    comment = obj.get("comment")
    label = parse_label(
        obj.get("human_check"),
        obj.get("difficulty_eval"),
        loc,
        annotator=annotator,
        comment=None if comment is None else optional_str(str(comment).strip(), loc, "comment"),
    )
    if label is not None:
        label.account = True
    return candidate_from(data_id, loc, rewritten_question=None, label=label, label_only=True)
