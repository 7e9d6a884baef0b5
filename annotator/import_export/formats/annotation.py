"""The paper's annotation sheet (Fig. 10): one row per candidate, labelled or not.

Fields `unsol_id, data_source, question, ground_truth, rewritten_condition, rewritten_question,
unsolvable_reason, human_check, difficulty_eval`; the authors' Excel sheets said `data_id` and
`rewritten_condition:`, and unsol records outside a release .json file read as unlabelled sheet rows. A sheet
is a flat table (.json, .jsonl, .csv, .parquet), read row by row by `table.read` (`reliablemath.sheet_candidate`
reads a row); `annotator.import_export.exports.annotation` writes one.
"""

from __future__ import annotations

from pathlib import Path

from annotator.import_export.formats import table
from annotator.import_export.formats.reliablemath import sample_kind


def sniff(path: Path) -> bool:
    return not path.is_dir() and sample_kind(path) in ("sheet", "unsol")


read = table.read  # a sheet is a flat table with the sheet's column names
