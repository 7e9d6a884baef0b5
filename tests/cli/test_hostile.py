"""No command ever shows a Python traceback: every command of the typer app (enumerated from it, so a new
command is covered the day it is added) runs with hostile arguments in a child process through the CLI's entry
function (`tests/support/cli.py`), a sample of them also as a fresh `python -m annotator` process that must say
the same, and each refusal is one line on stderr. Numbers out of range are usage errors (exit 2) that name the
option, the value and the range, and nothing is stored."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from sqlalchemy import func, select

from annotator.cli import app
from annotator.database.engine import PROJECT_ROOT, get_engine, read_session
from annotator.database.models import Annotator, Candidate, Problem, Run, Setting
from tests.support.cli import run_forked

BAD_DATABASE_URLS = (
    "postgresql://nobody@127.0.0.1:1/none", "nonsense://", " ", "sqlite:////proc/no-such-folder/x.db"
)
BAD_BASE_URLS = ("not a url", "ftp://example.org/v1", "http://", "http://127.0.0.1:99999/v1")


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]
    params: tuple[Any, ...]

    @property
    def name(self) -> str:
        return " ".join(self.words)


def _commands() -> list[Command]:
    found: list[Command] = []

    def walk(command: Any, words: tuple[str, ...]) -> None:
        # A group that also runs by itself (`report`, `judge`) is a command with its own options too.
        if not getattr(command, "commands", None) or getattr(command, "invoke_without_command", False):
            found.append(Command(words, tuple(p for p in command.params if p.name != "help")))
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, (*words, name))

    walk(typer.main.get_command(app), ())
    return found


COMMANDS = _commands()


def _kind(param: Any) -> Any:
    """int, float, Path, str, bool: the parameter's type, or the type of its items."""
    annotation = param.type_descriptor.annotation
    return typing.get_args(annotation)[0] if typing.get_args(annotation) else annotation


def _flag(param: Any) -> str | None:
    """The option's flag, or None for an argument."""
    return param.opts[0] if param.opts and param.opts[0].startswith("-") else None


def _low(param: Any) -> str:
    """The smallest value of a numeric option's range (its metavar `LOW..HIGH`)."""
    return str(param.metavar).split("..")[0].replace(",", "") if param.metavar else "1"


def _valid_args(command: Command, folder: Path, *, skip: str | None = None) -> list[str]:
    """Plausible values for the required parameters, so that the hostile one is what is tested."""
    args: list[str] = []
    for param in command.params:
        if not param.required or param.name == skip:
            continue
        kind = _kind(param)
        value = (
            _low(param) if kind in (int, float)
            else str(folder / "fine.jsonl") if kind is Path and _flag(param) is None
            else str(folder / f"out-{param.name}") if kind is Path
            else "ann"
        )
        flag = _flag(param)
        args += [flag, value] if flag else [value]
    return args


# How many cases of a sweep also run as fresh processes (at most, spread over it).
FRESH_SAMPLE = 4


def _environment(url: str, variables: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    env["ANNOTATOR_DATABASE_URL"] = url
    env.update(variables)
    return env


def _run(args: list[str], url: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """The command in a child forked from this process, through the CLI's entry function."""
    return run_forked(args, _environment(url, variables))


def _run_process(args: list[str], url: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """The command as a fresh `python -m annotator` process."""
    return subprocess.run(
        [sys.executable, "-m", "annotator", *args], cwd=PROJECT_ROOT, env=_environment(url, variables),
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def _said(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """Exit code, stdout (its numbers masked: a success says how long it took) and stderr."""
    return done.returncode, re.sub(r"[0-9]+", "N", done.stdout), done.stderr


def _run_all(
    cases: list[tuple[list[str], str]], variables: list[dict[str, str]] | None = None
) -> list[tuple[list[str], subprocess.CompletedProcess[str]]]:
    """Each case's command forked, in order (a command that succeeds may make what a later case names); a sample of
    them also as fresh processes just before, which must say the same."""
    given = variables or [{} for _ in cases]
    sample = range(0, len(cases), max(1, -(-len(cases) // FRESH_SAMPLE)))
    ran = []
    for i, ((args, url), extra) in enumerate(zip(cases, given, strict=True)):
        fresh = _run_process(args, url, **extra) if i in sample else None
        done = _run(args, url, **extra)
        if fresh is not None:
            assert _said(fresh) == _said(done), (args, fresh, done)
        ran.append((args, done))
    return ran


def _assert_one_line_or_success(args: list[str], done: subprocess.CompletedProcess[str]) -> None:
    shown = f"{args}: rc={done.returncode}\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}"
    assert "Traceback" not in done.stdout + done.stderr, shown
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), shown
        assert "internal error" not in lines[0], shown


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "fine.jsonl").write_text('{"data_id": "aime_0", "model": "m", "prompt": "p", "response": "r"}\n')
    return tmp_path


def _stored(url: str) -> dict[str, int]:
    with read_session(get_engine(url)) as session:
        return {model.__name__: session.execute(select(func.count()).select_from(model)).scalar_one()
                for model in (Setting, Run, Problem, Candidate, Annotator)}


def test_the_commands_are_enumerated_from_the_app() -> None:
    names = {command.name for command in COMMANDS}
    assert {"import", "export", "settings", "evaluate", "generate", "judge", "judge rules", "judge llm", "report",
            "report judges", "report compare", "report disagreed", "treecut", "batches", "user add"} <= names
    assert "user" not in names  # a group that only holds commands


def test_every_number_of_every_command_has_a_range(folder: Path) -> None:
    url = f"sqlite:///{folder / 'db.sqlite'}"
    get_engine(url)
    before = _stored(url)
    cases = []
    for command in COMMANDS:
        for param in command.params:
            if _kind(param) not in (int, float) or _flag(param) is None:
                continue
            for value in ("-1", "99999999999999999999", *(("nan", "inf") if _kind(param) is float else ())):
                args = [*command.words, *_valid_args(command, folder, skip=param.name), _flag(param), value]
                cases.append((args, url))
    assert len(cases) > 40
    for args, done in _run_all(cases):
        _assert_one_line_or_success(args, done)
        assert done.returncode == 2, (args, done.stderr)
        value = args[-1] if "'" + args[-2] + "': must be a whole" in done.stderr else repr(float(args[-1]))
        assert f"Invalid value for '{args[-2]}': must be " in done.stderr and f"got {value} " in done.stderr, (
            args, done.stderr)
    assert _stored(url) == before


def test_paths_that_are_missing_directories_files_or_not_utf8(folder: Path) -> None:
    url = f"sqlite:///{folder / 'db.sqlite'}"
    get_engine(url)
    before = _stored(url)
    a_file = folder / "a-file.txt"
    a_file.write_text("not a directory")
    not_utf8 = folder / "latin1.json"
    not_utf8.write_bytes(b'[{"question": "caf\xe9"}]')
    hostile = [str(folder / "missing" / "x.json"), str(folder), str(a_file), str(not_utf8), str(a_file / "under")]
    cases = []
    for command in COMMANDS:
        for param in command.params:
            if _kind(param) is not Path:
                continue
            for value in hostile:
                given = [_flag(param), value] if _flag(param) else [value]
                cases.append(([*command.words, *_valid_args(command, folder, skip=param.name), *given], url))
    assert len(cases) >= 20
    for args, done in _run_all(cases):
        _assert_one_line_or_success(args, done)
    assert _stored(url) == before


def test_an_export_into_a_file_is_refused(folder: Path) -> None:
    a_file = folder / "a-file.txt"
    a_file.write_text("keep me")
    done = _run_process(["export", "--out", str(a_file)], f"sqlite:///{folder / 'db.sqlite'}")
    assert done.returncode != 0 and done.stderr == f"error: --out {a_file} is a file; give a directory\n"
    assert a_file.read_text() == "keep me"


def test_bad_database_urls_for_every_command(folder: Path) -> None:
    cases = [([*command.words, *_valid_args(command, folder)], url)
             for command in COMMANDS for url in BAD_DATABASE_URLS]
    for args, done in _run_all(cases):
        _assert_one_line_or_success(args, done)


def test_a_bad_environment_variable_stops_every_command_in_one_line_before_it_does_anything(folder: Path) -> None:
    url = f"sqlite:///{folder / 'db.sqlite'}"
    bad = [  # (variable, value, what the line says is allowed), taken in turn by the commands
        ("ANNOTATOR_SESSION_HOURS", "soon", "a number of hours from 0.1 to 8,760"),
        ("ANNOTATOR_SESSION_RECHECK_SECONDS", "-1", "a number of seconds from 0 to 3,600"),
        ("ANNOTATOR_PAGE_BUSY_SECONDS", "nan", "a number of seconds from 0.05 to 60"),
        ("ANNOTATOR_HEARTBEAT_TIMEOUT", "inf", "a number of seconds from 0.5 to 86,400"),
        ("ANNOTATOR_LOG_DIR", str(folder / "fine.jsonl"), "a folder (not a file)"),
        ("ANNOTATOR_TMP_DIR", str(folder / "fine.jsonl"), "a folder (not a file)"),
        ("ANNOTATOR_DATABASE_URL", "db.sqlite",
         "a database URL: sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/NAME"),
    ]
    cases = [([*command.words, *_valid_args(command, folder)], bad[i % len(bad)]) for i, command in enumerate(COMMANDS)]
    ran = _run_all([(args, url) for args, _ in cases], [{name: value} for _, (name, value, _) in cases])
    for (args, (name, value, allowed)), (_, result) in zip(cases, ran, strict=True):
        assert (result.returncode, result.stderr) == (2, f"error: {name}={value!r}: {allowed}\n"), (args, result)
    assert not (folder / "db.sqlite").exists() and sorted(p.name for p in folder.iterdir()) == ["fine.jsonl"]


def test_bad_base_urls_are_usage_errors(folder: Path) -> None:
    url = f"sqlite:///{folder / 'db.sqlite'}"
    cases = [
        ([*command.words, option, bad], url)
        for command in COMMANDS
        for option in ("--base-url", "--rewrite-base-url")
        if any(_flag(p) == option for p in command.params)
        for bad in BAD_BASE_URLS
    ]
    assert len(cases) >= 8
    for args, done in _run_all(cases):
        _assert_one_line_or_success(args, done)
        assert done.returncode == 2 and f"Invalid value for '{args[-2]}'" in done.stderr, (args, done.stderr)


def test_garbage_words_and_an_unexpected_error_are_one_line(folder: Path) -> None:
    url = f"sqlite:///{folder / 'db.sqlite'}"
    for args in (["nosuch"], ["stats", "--bogus"], ["settings", "--labels-per-candidate", "abc"], ["user"], []):
        _assert_one_line_or_success(args, _run_process(args, url))


def test_an_unexpected_error_is_one_line_and_its_traceback_is_logged(tmp_path: Path) -> None:
    # A command with a bug, added to the real app in a real process.
    program = (
        "from annotator.cli import app, main\n"
        "@app.command()\n"
        "def boom() -> None:\n"
        "    raise RuntimeError('a bug\\nover two lines')\n"
        "main()\n"
    )
    env = {**os.environ, "ANNOTATOR_LOG_DIR": str(tmp_path / "logs")}
    done = subprocess.run([sys.executable, "-c", program, "boom"], cwd=PROJECT_ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    log = tmp_path / "logs" / "annotator-errors.log"
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert done.stderr == f"error: internal error (RuntimeError: a bug); details in {log}\n"
    assert "Traceback" in log.read_text() and "RuntimeError: a bug" in log.read_text()
