"""The house rules of ARCHITECTURE.md, checked: layers import downwards, core modules stay small, the command
line starts at once."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.imports import PROJECT_ROOT, modules_loaded_by

CORE = PROJECT_ROOT / "annotator"
MAX_CORE_MODULE_LINES = 450


def _imported_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_core_never_imports_streamlit_typer_ui_or_pages() -> None:
    offenders = {}
    for path in CORE.rglob("*.py"):
        if "cli" in path.relative_to(CORE).parts:
            continue  # the command line is a user interface of its own, like pages/
        bad = {n for n in _imported_names(path) if n.split(".")[0] in ("streamlit", "typer", "ui", "pages")}
        if bad:
            offenders[str(path.relative_to(PROJECT_ROOT))] = sorted(bad)
    assert not offenders


def test_no_module_imports_another_packages_private_module() -> None:
    offenders = []
    for path in [*CORE.rglob("*.py"), *(PROJECT_ROOT / "pages").glob("*.py"), *(PROJECT_ROOT / "ui").glob("*.py")]:
        package = ".".join(path.relative_to(PROJECT_ROOT).parent.parts)
        for name in _imported_names(path):
            parts = name.split(".")
            private = [i for i, part in enumerate(parts) if part.startswith("_") and part != "__future__"]
            if private and ".".join(parts[: private[0]]) != package:
                offenders.append(f"{path.relative_to(PROJECT_ROOT)} imports {name}")
    assert not offenders


def test_no_core_module_is_over_450_lines() -> None:
    sizes = {
        str(p.relative_to(PROJECT_ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in CORE.rglob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > MAX_CORE_MODULE_LINES} == {}


def test_the_command_line_loads_no_heavy_library_to_show_its_help() -> None:
    heavy = ("openai", "pandas", "pyarrow", "sqlalchemy", "sqlmodel", "alembic", "statsmodels", "sklearn")
    assert modules_loaded_by("import annotator.cli", *heavy) == []
    result = subprocess.run([sys.executable, "-m", "annotator", "--help"], cwd=PROJECT_ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "agreement" in result.stdout and "generate" in result.stdout


def test_pages_write_only_through_page_write() -> None:
    """A page's write checks the account and waits briefly for a lock (`ui.writes.page_write`); only signing in
    (no account to check yet) writes with a bare `write_session`."""
    signing_in = {PROJECT_ROOT / "app.py", PROJECT_ROOT / "ui" / "sign_in.py", PROJECT_ROOT / "ui" / "writes.py"}
    offenders = [
        path.relative_to(PROJECT_ROOT).as_posix()
        for path in [*(PROJECT_ROOT / "pages").glob("*.py"), *(PROJECT_ROOT / "ui").glob("*.py")]
        if path not in signing_in and "write_session" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
