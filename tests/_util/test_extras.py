"""Optional extras: found without being imported, and the one line that names a missing one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from annotator._util.extras import INSPECT, Extra, MissingExtra
from tests.conftest import PROJECT_ROOT
from tests.support.extras import without_module


def test_the_missing_extras_line_names_it_and_the_command_that_installs_it() -> None:
    error = INSPECT.missing("reading")
    assert isinstance(error, MissingExtra) and isinstance(error, ValueError)  # the pages show ValueErrors
    assert str(error) == 'reading Inspect AI logs needs the "inspect" extra: pip install -e ".[inspect]"'


def test_an_extra_is_installed_when_its_module_can_be_found_and_is_not_loaded_to_tell(tmp_path: Path) -> None:
    assert INSPECT.installed()  # the test extra holds it
    assert not Extra("nowhere", "annotator_no_such_module", "nothing").installed()
    code = ("import sys; from annotator._util.extras import INSPECT; "
            "print(INSPECT.installed(), 'inspect_ai' in sys.modules)")
    found = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["True", "False"]
    refused = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True,
                             check=True, env=without_module("inspect_ai", tmp_path))
    assert refused.stdout.split() == ["False", "False"]
