"""Every `python -m annotator ...` command line in the README, docs/ and the pages names a command the app has, and
every option it shows belongs to that command (`report judges --json`, not `report --judges`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer.main

from annotator.cli import app
from tests.conftest import PROJECT_ROOT

DOCUMENTS = [PROJECT_ROOT / "README.md", PROJECT_ROOT / "ARCHITECTURE.md",
             *sorted((PROJECT_ROOT / "docs").glob("*.md")), *sorted((PROJECT_ROOT / "app_pages").glob("*.py")),
             *sorted((PROJECT_ROOT / "ui").glob("*.py"))]
# Commands that hand their options to another program (`app`: to `streamlit run`).
PASSED_ON = {("app",)}


def _command_lines(path: Path) -> list[str]:
    """The text after each `python -m annotator`, up to a closing backtick or a `#` comment, with `\\` continued
    lines joined."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    return [match.group(1) for match in re.finditer(r"python -m annotator ([^`#\n]*)", text)]


def _resolve(words: list[str]) -> tuple[tuple[str, ...], Any, list[str]]:
    """The command the leading words name (its path and click command) and the words after it."""
    command: Any = typer.main.get_command(app)
    path: tuple[str, ...] = ()
    rest = list(words)
    while rest and rest[0] in (getattr(command, "commands", None) or {}):
        word = rest.pop(0)
        command, path = command.commands[word], (*path, word)
    return path, command, rest


def _flags(command: Any) -> set[str]:
    return {"--help"} | {flag for param in command.params for flag in (*param.opts, *param.secondary_opts)}


def _problems(line: str) -> list[str]:
    words = [word.strip("[](),;.") for word in line.split()]
    path, command, rest = _resolve([word for word in words if word])
    if not path:
        return [] if not rest or rest[0].isupper() or rest[0].startswith("--help") else [f"no command {rest[0]!r}"]
    if path in PASSED_ON:
        return []
    given = [word.split("=")[0] for word in rest if word.startswith("--")]
    return [f"{' '.join(path)} has no option {flag}" for flag in given if flag not in _flags(command)]


def test_every_documented_command_line_is_one_the_app_takes() -> None:
    lines = {(path.name, line) for path in DOCUMENTS for line in _command_lines(path)}
    assert len(lines) > 40
    problems = sorted(f"{name}: python -m annotator {line.strip()}: {problem}" for name, line in lines
                      for problem in _problems(line))
    assert problems == []


def test_the_check_finds_an_option_of_another_command() -> None:
    assert _problems("report --judges [--json]") == ["report has no option --judges"]
    assert _problems("judge --rule llm --model M") == ["judge has no option --model"]
    assert _problems("report judges [--json] [--model M]") == []
    assert _problems("judge llm --model m --base-url http://127.0.0.1:8000/v1 --parts 8 --queue") == []
    assert _problems("reports --json") == ["no command 'reports'"]
