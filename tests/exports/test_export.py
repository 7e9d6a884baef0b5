"""The exporters' registry: the import-free name list agrees with it, an unknown format is refused before the
database or the output directory is touched, and writers are loaded only when an export runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator import exports
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
