"""The annotation-sheet export (Fig. 10): every candidate with every field, labels as resolved so far."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from annotator.import_export.exports import export
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from tests.support.sheets import sheet_rows


def test_annotation_export_has_every_fig10_field(sqlite_engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(sheet_rows()), encoding="utf-8")
    import_parts(read(path), engine=sqlite_engine)
    export("annotation", tmp_path / "out", engine=sqlite_engine)
    rows = json.loads((tmp_path / "out" / "annotation.json").read_text(encoding="utf-8"))
    expected = sheet_rows()
    expected[1]["human_check"] = expected[1]["difficulty_eval"] = None
    for row in expected:  # one imported label each: provenance "single"; no adjudication
        row.update(label_source=None if row["human_check"] is None else "single", adjudicated_by=None,
                   adjudicated_at=None)
    assert rows == expected
