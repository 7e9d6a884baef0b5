"""The exports' one list: every writer module has its entry and each entry's functions exist, names and aliases
are unique, an unknown format is refused before the database or the output directory is touched, and writers
are loaded only when an export runs."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator.database.engine import read_session
from annotator.import_export import exports
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from tests.conftest import PROJECT_ROOT
from tests.support.imports import modules_loaded_by


def test_every_writer_module_has_an_entry_whose_functions_exist() -> None:
    exports_dir = PROJECT_ROOT / "annotator" / "import_export" / "exports"
    modules = {p.stem for p in exports_dir.glob("*.py")} - {"__init__", "rows"}
    modules |= {p.parent.name for p in exports_dir.glob("*/__init__.py")}  # a writer with modules of its own
    assert {spec.module for spec in exports.EXPORTS} == {f"annotator.import_export.exports.{stem}" for stem in modules}
    for spec in exports.EXPORTS:
        writer = spec.function(spec.writer.split(":")[1])
        assert set(inspect.signature(writer).parameters) == {"session", "out", *spec.options}, spec.name
        assert callable(spec.function("nothing_to_write")), spec.name
        if spec.manifest:
            assert set(inspect.signature(spec.function(spec.manifest)).parameters) == {"session", *spec.options}
        assert spec.description and "\n" not in spec.description and "`" not in spec.description
    names = [name for spec in exports.EXPORTS for name in (spec.name, *spec.aliases)]
    assert len(names) == len(set(names))
    assert all(exports.find(name) is spec for spec in exports.EXPORTS for name in (spec.name, *spec.aliases))


def test_formats_both_read_and_written_have_one_name_and_the_same_aliases() -> None:
    from annotator.import_export.formats import FORMATS

    both = {fmt.name for fmt in FORMATS} & {spec.name for spec in exports.EXPORTS}
    assert both == {"reliablemath", "annotation", "treecut", "umwp", "gsm_ic", "transcripts"}
    for spec in exports.EXPORTS:
        if spec.name in both:
            (fmt,) = [fmt for fmt in FORMATS if fmt.name == spec.name]
            assert set(spec.aliases) <= set(fmt.aliases), spec.name


def test_an_unknown_format_is_refused_first(tmp_path: Path, set_environment: Callable[..., None]) -> None:
    database = tmp_path / "never.sqlite"
    set_environment(ANNOTATOR_DATABASE_URL=f"sqlite:///{database}")
    with pytest.raises(exports.UnknownExportFormat, match="unknown export format 'xlsx'; choose one of reliablemath"):
        exports.export("xlsx", tmp_path / "out")
    assert not database.exists() and not (tmp_path / "out").exists()


def test_importing_the_package_loads_no_writer_nor_the_database_layer() -> None:
    layers = ("annotator.import_export.exports.", "annotator.database.queries", "annotator.database.engine",
              "sqlalchemy", "sqlmodel", "pyarrow")
    assert modules_loaded_by("import annotator.import_export.exports", *layers) == []


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
            reasons = {spec.name: exports.nothing_to_write(session, spec.name) for spec in exports.EXPORTS}
        for format, reason in reasons.items():
            assert (reason is not None) == (_written(engine, format, tmp_path / stage) == 0), (stage, format, reason)
    assert reasons["treecut"] == "no TreeCut files were imported"
    assert reasons["transcripts"] == "the database holds no transcripts"
    assert reasons["reliablemath"] is None and reasons["labels"] is None
