"""The exporters' registry: the import-free name list agrees with it, an unknown format is refused before the
database or the output directory is touched, and writers are loaded only when an export runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator import exports
from annotator.db import read_session
from annotator.formats import read
from annotator.importer import import_parts
from tests.conftest import PROJECT_ROOT
from tests.support.imports import modules_loaded_by


def test_the_name_list_is_exactly_the_registry() -> None:
    assert exports.FORMATS == tuple(exports.exporters())
    modules = {p.stem for p in (PROJECT_ROOT / "annotator" / "exports").glob("*.py") if p.stem != "__init__"}
    assert {writer.__module__.rsplit(".", 1)[1] for writer in exports.exporters().values()} == modules


def test_an_unknown_format_is_refused_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "never.sqlite"
    monkeypatch.setenv("ANNOTATOR_DATABASE_URL", f"sqlite:///{database}")
    with pytest.raises(exports.UnknownExportFormat, match="unknown export format 'xlsx'; choose one of reliablemath"):
        exports.export("xlsx", tmp_path / "out")
    assert not database.exists() and not (tmp_path / "out").exists()


def test_importing_the_package_loads_no_writer_nor_the_database_layer() -> None:
    layers = ("annotator.exports.", "annotator.store", "annotator.db", "sqlalchemy", "sqlmodel", "pyarrow")
    assert modules_loaded_by("import annotator.exports", *layers) == []


def _written(engine: Engine, format: str, out: Path) -> int:
    manifest = exports.export(format, out / format, engine=engine)
    return sum(entry["records"] for entry in manifest["files"].values())


def test_nothing_to_write_says_why_exactly_when_an_export_writes_no_record(
    engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    """Checked against what each writer really writes, on an empty database and after a release import."""
    for stage in ("empty", "release"):
        if stage == "release":
            import_parts(read(shared_data / "reliablemath"), engine=engine)
        with read_session(engine) as session:
            reasons = {format: exports.nothing_to_write(session, format) for format in exports.FORMATS}
        for format, reason in reasons.items():
            assert (reason is not None) == (_written(engine, format, tmp_path / stage) == 0), (stage, format, reason)
    assert reasons["treecut"] == "no TreeCut files were imported"
    assert reasons["transcripts"] == "the database holds no transcripts"
    assert reasons["reliablemath"] is None and reasons["labels"] is None
