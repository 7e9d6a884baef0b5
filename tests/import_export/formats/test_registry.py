"""The format registry: one entry per format module in one list, loaded only when a path is sniffed or read,
readers stay readers (no database, no writers), and `read` resolves names and aliases as before."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from annotator.import_export.formats import FORMATS, InputError, aliases, find, read, registry
from tests.conftest import PROJECT_ROOT
from tests.support.imports import modules_loaded_by

FORMATS_DIR = PROJECT_ROOT / "annotator" / "import_export" / "formats"


def test_the_list_is_in_detection_order_with_one_name_per_format() -> None:
    assert list(registry()) == [
        "batch", "inspect_log", "transcripts", "lm_eval", "openai_batch",
        "treecut", "umwp", "gsm_ic", "reliablemath", "check", "annotation",
        "table",
    ]
    assert aliases() == {
        "inspect": "inspect_log",
        "lm-eval": "lm_eval",
        "openai-batch": "openai_batch",
        "gsm-ic": "gsm_ic",
        "sheet": "annotation",
        "jsonl": "table",
        "csv": "table",
        "parquet": "table",
        "xlsx": "batch",
    }


def test_every_name_and_alias_finds_its_format_and_names_are_unique() -> None:
    every = [name for fmt in FORMATS for name in (fmt.name, *fmt.aliases)]
    assert len(every) == len(set(every))
    for fmt in FORMATS:
        assert all(find(name) is fmt for name in (fmt.name, *fmt.aliases))
    assert find("docx") is None


def test_each_format_module_has_its_entry_and_reads() -> None:
    modules = {
        path.stem
        for path in FORMATS_DIR.glob("*.py")
        if not path.stem.startswith("_") and path.stem not in ("reading", "registry")
    }
    assert {fmt.module for fmt in FORMATS} == {f"annotator.import_export.formats.{stem}" for stem in modules}
    for fmt in FORMATS:
        reader = fmt.reader()
        assert callable(reader.sniff) and callable(reader.read), fmt.name
        # A module that names its format itself (what it stores as a source file's format) names it as the list.
        source = Path(reader.__file__ or "").read_text(encoding="utf-8")
        assert "\nNAME = " not in source or f'\nNAME = "{fmt.name}"\n' in source, fmt.name
        assert fmt.description and "\n" not in fmt.description


def _imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("path", sorted(FORMATS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_readers_import_neither_models_nor_store_nor_writers(path: Path) -> None:
    banned = ("annotator.database.models", "annotator.database.queries", "annotator.database.engine",
              "annotator.import_export.exports", "sqlalchemy", "sqlmodel")
    imported = _imported_modules(path)
    assert not {m for m in imported if m.startswith(banned)}, path.name


def test_loading_every_reader_loads_no_database_layer() -> None:
    layers = ("annotator.database.models", "annotator.database.queries", "annotator.database.engine",
              "annotator.import_export.exports", "sqlalchemy", "sqlmodel")
    statement = "from annotator.import_export.formats import registry; registry()"
    assert modules_loaded_by(statement, *layers, "pandas", "pyarrow") == []


def test_importing_the_package_or_its_list_loads_no_reader() -> None:
    loaded = modules_loaded_by("import annotator.import_export.formats.registry", "annotator.import_export.formats.")
    package = "annotator.import_export.formats"
    assert loaded == [f"{package}._io", f"{package}.reading", f"{package}.registry"]
    assert modules_loaded_by(f"from {package} import FORMATS; FORMATS[0].sniff", f"{package}.") == loaded


def test_nothing_outside_the_package_imports_its_private_helpers() -> None:
    for path in [
        *PROJECT_ROOT.glob("annotator/**/*.py"),
        *PROJECT_ROOT.glob("app_pages/*.py"),
        PROJECT_ROOT / "app.py",
        *PROJECT_ROOT.glob("tests/**/*.py"),
        *PROJECT_ROOT.glob("bench/*.py"),
    ]:
        if path.parent == FORMATS_DIR:
            continue
        # A private helper's own tests (tests/import_export/formats/test_io.py for _io) are the one place that may
        # import it.
        private = path.stem.removeprefix("test_")
        own = f"annotator.import_export.formats._{private}" if path.parent.name == "formats" else ""
        imported = {m for m in _imported_modules(path) if m.startswith("annotator.import_export.formats._")}
        assert imported <= {own}, path


def test_read_takes_names_and_aliases_and_reports_unknown_ones(tmp_path: Path) -> None:
    path = tmp_path / "GSM-IC_2step.jsonl"
    path.write_text(json.dumps({"original_question": "Q?", "new_question": "Q? X.", "answer": "1"}) + "\n")
    for name in ("gsm_ic", "gsm-ic"):
        (part,) = read(path, format=name)
        assert part.source_file is not None and part.source_file.format == "gsm_ic"
    choices = "batch, inspect_log, transcripts, lm_eval, openai_batch, treecut, umwp, gsm_ic, reliablemath"
    with pytest.raises(InputError, match=f"unknown format 'docx'; choose one of {choices}"):
        read(path, format="docx")
    with pytest.raises(InputError, match="no such file or directory"):
        read(tmp_path / "missing.jsonl", format="docx")
