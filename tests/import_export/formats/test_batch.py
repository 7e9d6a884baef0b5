"""Reading a filled Excel batch back (the `batch` format): whose labels they are, and bad cells refused with
the file, the row and the column named, nothing stored (issue 11, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Annotation, AnnotationEvent, Annotator, CandidateClaim
from annotator.import_export.formats import InputError, ReadOptions, detect, read
from annotator.import_export.importer import import_parts
from annotator.labelling import batches
from tests.support.candidates import add_candidates, add_user


@pytest.fixture
def sheet(sqlite_engine: Engine, tmp_path: Path) -> Path:
    """ann's batch of three candidates, unfilled."""
    add_candidates(sqlite_engine, 3)
    add_user(sqlite_engine, "ann")
    batches.create_batches(sqlite_engine, out=tmp_path, annotators=["ann"], per_annotator=3)
    return tmp_path / "ann.xlsx"


def _set(path: Path, cells: dict[str, object]) -> None:
    workbook = load_workbook(path)
    for ref, value in cells.items():
        workbook.active[ref] = value
    workbook.save(path)


def _stored(engine: Engine) -> tuple[int, int]:
    with read_session(engine) as session:
        return (
            session.execute(select(func.count()).select_from(Annotation)).scalar_one(),
            session.execute(select(func.count()).select_from(AnnotationEvent)).scalar_one(),
        )


def _import(engine: Engine, path: Path, **options: str) -> object:
    return import_parts(read(path, options=ReadOptions(**options)), engine=engine)


def test_an_xlsx_file_is_detected_as_a_batch(sheet: Path) -> None:
    assert detect(sheet) == "batch"


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ({"H3": 2}, r"ann\.xlsx: row 3: field 'human_check': expected 1 \(acceptable\) or 0 \(not acceptable\), got 2"),
        ({"H2": 0, "I2": 1}, r"ann\.xlsx: row 2: field 'difficulty_eval': must be empty when human_check is 0"),
        ({"H4": 1}, r"ann\.xlsx: row 4: field 'difficulty_eval': is required when human_check is 1"),
        ({"I2": 1}, r"ann\.xlsx: row 2: field 'human_check': difficulty_eval is given but human_check is empty"),
        ({"I3": "hard", "H3": 1}, r"ann\.xlsx: row 3: field 'difficulty_eval': expected 0 \(simple\) or 1 \(hard\)"),
        ({"A3": "math_99_remove_1", "H3": 0}, r"ann\.xlsx: row 3: field 'data_id': unknown data_id 'math_99_remove_1'"),
        ({"A2": "not an id"}, r"ann\.xlsx: row 2: field 'data_id': 'not an id' is not of the form"),
        ({"A4": "math_0_remove_1", "H2": 1, "I2": 0}, r"ann\.xlsx: row 4: field 'data_id': duplicate data_id"),
    ],
)
def test_a_bad_cell_names_file_row_and_column_and_nothing_is_stored(
    sqlite_engine: Engine, sheet: Path, cells: dict[str, object], message: str
) -> None:
    # A good label in another row: it must not be stored either.
    _set(sheet, {"H2": 1, "I2": 0, **cells} if "H2" not in cells and "I2" not in cells else cells)
    with pytest.raises(InputError, match=message):
        _import(sqlite_engine, sheet)
    assert _stored(sqlite_engine) == (0, 0)


def test_the_document_property_wins_over_the_file_name(sqlite_engine: Engine, sheet: Path) -> None:
    add_user(sqlite_engine, "bob")
    renamed = sheet.with_name("bob.xlsx")
    sheet.rename(renamed)
    _set(renamed, {"H2": 1, "I2": 1})
    _import(sqlite_engine, renamed)
    with read_session(sqlite_engine) as session:
        names = session.execute(select(Annotator.name).join(Annotation, Annotation.annotator_id == Annotator.id))
        assert names.scalars().all() == ["ann"]


def test_without_the_property_the_file_name_says_whose_and_they_need_an_account(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    add_candidates(sqlite_engine, 1)
    workbook = Workbook()
    workbook.active.append(["data_id", "human_check", "difficulty_eval"])
    workbook.active.append(["math_0_remove_1", 0, None])
    path = tmp_path / "zed.xlsx"
    workbook.save(path)
    with pytest.raises(InputError, match=r"zed\.xlsx: row 2: field 'annotator': the labels belong to 'zed', who has"):
        _import(sqlite_engine, path)
    assert _stored(sqlite_engine) == (0, 0)
    add_user(sqlite_engine, "zed")
    summary = _import(sqlite_engine, path)
    assert summary.labels_added == 1  # type: ignore[attr-defined]


def test_a_sheet_without_label_columns_or_rows_is_refused(sqlite_engine: Engine, tmp_path: Path) -> None:
    workbook = Workbook()
    workbook.active.append(["data_id", "question"])
    workbook.active.append(["math_0_remove_1", "Q?"])
    workbook.save(tmp_path / "ann.xlsx")
    with pytest.raises(InputError, match=r"ann\.xlsx: the header has no human_check, difficulty_eval column"):
        read(tmp_path / "ann.xlsx", format="batch")
    (tmp_path / "broken.xlsx").write_bytes(b"not a zip file")
    with pytest.raises(InputError, match=r"broken\.xlsx: invalid Excel file"):
        read(tmp_path / "broken.xlsx", format="batch")


def test_an_empty_sheet_is_unlabelled_rows_and_keeps_its_claims(sqlite_engine: Engine, sheet: Path) -> None:
    summary = _import(sqlite_engine, sheet)
    assert (summary.labels_added, summary.unlabelled) == (0, 3)  # type: ignore[attr-defined]
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(CandidateClaim)).scalar_one() == 3


def test_a_changed_label_needs_update(sqlite_engine: Engine, sheet: Path) -> None:
    _set(sheet, {"H2": 1, "I2": 0})
    _import(sqlite_engine, sheet)
    _set(sheet, {"H2": 0, "I2": None})
    with pytest.raises(InputError, match=r"row 2: field 'human_check': conflicts with ann's label"):
        _import(sqlite_engine, sheet)
    summary = import_parts(read(sheet), engine=sqlite_engine, update=True)
    assert summary.labels_updated == 1
    assert _stored(sqlite_engine) == (1, 2)
