"""The suite's own rules: a missing required component skips locally and fails under CI=true; CI installs what
the README says, and the pinned lock files list exactly the packages `pyproject.toml` declares."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import PROJECT_ROOT

CASES = {
    "postgres": (
        {"ANNOTATOR_PG_BINDIR": "/nonexistent"},
        "tests/import_export/formats/test_reliablemath.py::test_reimport_is_a_no_op[postgres]",
        "cannot start PostgreSQL",
    ),
    "shared data": (
        {"ANNOTATOR_SHARED_DATA": "/nonexistent"},
        "tests/import_export/formats/test_reliablemath.py::test_reimport_is_a_no_op[sqlite]",
        "the shared public data is not at /nonexistent",
    ),
}


@pytest.mark.parametrize("component", sorted(CASES))
@pytest.mark.parametrize("ci", ["true", ""])
def test_missing_component(component: str, ci: str) -> None:
    env_changes, test_id, reason = CASES[component]
    env = {**os.environ, **env_changes, "CI": ci}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test_id],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if ci:
        assert result.returncode == 1, result.stdout
        assert "required component missing under CI=true" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "1 skipped" in result.stdout
    assert reason in result.stdout


def _pyproject() -> dict:
    return tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())


def _declared(group: str) -> dict[str, Requirement]:
    """`dependencies` ("") or an extra's requirements by canonical name, the project's own extras expanded."""
    project = _pyproject()["project"]
    listed = project["dependencies"] if not group else project["optional-dependencies"][group]
    found: dict[str, Requirement] = {}
    for text in listed:
        requirement = Requirement(text)
        if canonicalize_name(requirement.name) == canonicalize_name(project["name"]):
            for extra in sorted(requirement.extras):
                found.update(_declared(extra))
        else:
            found[canonicalize_name(requirement.name)] = requirement
    return found


def _pinned(path: Path) -> dict[str, Requirement]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    pins = [Requirement(line) for line in lines if line]
    assert all(len(pin.specifier) == 1 and next(iter(pin.specifier)).operator == "==" for pin in pins), path
    return {canonicalize_name(pin.name): pin for pin in pins}


@pytest.mark.parametrize(("lock", "group"), [("requirements.txt", ""), ("requirements-test.txt", "test")])
def test_the_lock_files_pin_exactly_what_pyproject_declares(lock: str, group: str) -> None:
    """requirements.txt: the runtime dependencies; requirements-test.txt: the `test` extra."""
    declared, pinned = _declared(group), _pinned(PROJECT_ROOT / lock)
    assert sorted(pinned) == sorted(declared)
    for name, requirement in declared.items():
        version = next(iter(pinned[name].specifier)).version
        assert requirement.specifier.contains(version), (name, str(requirement.specifier), version)
        assert pinned[name].extras == requirement.extras, name


def test_test_tools_are_not_runtime_dependencies() -> None:
    runtime = _declared("")
    assert not {"pytest", "playwright", "hypothesis", "ruff", "scikit-learn", "llama-cpp-python"} & set(runtime)
    assert {"pytest", "playwright", "scikit-learn"} <= set(_declared("test"))


def _commands(section: str) -> list[str]:
    """The commands in the README's first bash block under `## {section}`."""
    text = (PROJECT_ROOT / "README.md").read_text()
    block = re.search(rf"^## {section}\n.*?```bash\n(.*?)```", text, re.S | re.M)
    assert block, section
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_the_readme_install_and_test_commands_word_for_word() -> None:
    setup, test = _commands("Set up and run"), _commands("Test")
    installs = [line for line in setup + test if " pip install " in f" {line}"]
    assert len(installs) == 2 and test[-1] == "python -m pytest"
    ci = [line.strip() for line in (PROJECT_ROOT / ".ci" / "run").read_text().splitlines()]
    ci_installs = [line for line in ci if " pip install " in f" {line}"]
    assert ci_installs == installs
    assert ci.index(installs[-1]) < ci.index("python -m pytest")


def test_the_console_script_is_python_m_annotator() -> None:
    module, _, function = _pyproject()["project"]["scripts"]["annotator"].partition(":")
    main = ast.parse((PROJECT_ROOT / "annotator" / "__main__.py").read_text())
    imported = [(node.module, alias.name) for node in ast.walk(main) if isinstance(node, ast.ImportFrom)
                for alias in node.names]
    called = [node.func.id for node in ast.walk(main) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    assert (module, function) in imported and called == [function]
