"""The `ANNOTATOR_*` settings (`annotator.settings.environment`): each variable's default, a good value, and every
kind of bad value refused with one line naming the variable, the value and what is allowed, in the process and
through a real `python -m annotator` process. (Every command: tests/cli/test_hostile.py; the app's start:
tests/cli/test_webapp.py, tests/pages/test_app.py.)"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.settings import environment
from annotator.settings.environment import Settings, SettingsError, read, settings
from tests.conftest import PROJECT_ROOT
from tests.support.cli import run_forked

URL_ALLOWED = "a database URL: sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/NAME"
# Each number: (its range as the message says it, a good value, its low and high ends).
NUMBERS = {
    "ANNOTATOR_SESSION_HOURS": ("a number of hours from 0.1 to 8,760", 0.1, 8760),
    "ANNOTATOR_SESSION_RECHECK_SECONDS": ("a number of seconds from 0 to 3,600", 0, 3600),
    "ANNOTATOR_PAGE_BUSY_SECONDS": ("a number of seconds from 0.05 to 60", 0.05, 60),
    "ANNOTATOR_HEARTBEAT_TIMEOUT": ("a number of seconds from 0.5 to 86,400", 0.5, 86_400),
}
FIELDS = {
    "ANNOTATOR_DATABASE_URL": "database_url", "ANNOTATOR_SESSION_HOURS": "session_hours",
    "ANNOTATOR_SESSION_RECHECK_SECONDS": "session_recheck_seconds",
    "ANNOTATOR_PAGE_BUSY_SECONDS": "page_busy_seconds", "ANNOTATOR_HEARTBEAT_TIMEOUT": "heartbeat_timeout",
    "ANNOTATOR_LOG_DIR": "log_dir", "ANNOTATOR_TMP_DIR": "tmp_dir",
}
DEFAULTS = Settings(
    database_url=f"sqlite:///{PROJECT_ROOT / 'db' / 'annotator.sqlite'}", session_hours=12.0,
    session_recheck_seconds=60.0, page_busy_seconds=5.0, heartbeat_timeout=60.0, log_dir=PROJECT_ROOT / "logs",
    tmp_dir=Path(tempfile.gettempdir()) / "annotator-uploads",
)


def _bad_values(folder: Path) -> list[tuple[str, str, str]]:
    """(variable, bad value, the one line that refuses it) for every kind of bad value of every variable."""
    a_file = folder / "a-file.txt"
    a_file.write_text("not a folder")
    cases = [(name, value, f"{name}={value!r}: {allowed}")
             for name, (allowed, low, high) in NUMBERS.items()
             for value in ("soon", "12h", " ", "-1", str(high * 2), "nan", "inf", "-inf", "1e400")]
    cases += [(name, "0.01", f"{name}='0.01': {NUMBERS[name][0]}")
              for name in NUMBERS if NUMBERS[name][1] > 0.01]
    cases += [("ANNOTATOR_DATABASE_URL", value, f"ANNOTATOR_DATABASE_URL={value!r}: {URL_ALLOWED}")
              for value in ("db/annotator.sqlite", " ", "sqlite:/x.db")]
    cases += [(name, str(a_file), f"{name}={str(a_file)!r}: a folder (not a file)")
              for name in ("ANNOTATOR_LOG_DIR", "ANNOTATOR_TMP_DIR")]
    return cases


def test_the_variables_are_the_ones_declared() -> None:
    assert [variable.name for variable in environment.VARIABLES] == list(FIELDS)
    assert [variable.field for variable in environment.VARIABLES] == list(FIELDS.values())


def test_every_variable_unset_or_empty_has_its_default() -> None:
    assert read({}) == DEFAULTS
    assert read(dict.fromkeys(FIELDS, "")) == DEFAULTS
    assert read({"ANNOTATOR_SESSION_HOURS": "2", "UNRELATED": "x"}) == Settings(
        **{**DEFAULTS.__dict__, "session_hours": 2.0})


def test_a_good_value_of_every_variable_is_read_as_its_type(tmp_path: Path) -> None:
    values = {
        "ANNOTATOR_DATABASE_URL": "postgresql+psycopg://annotator:pw@db/annotator",
        "ANNOTATOR_SESSION_HOURS": "0.5", "ANNOTATOR_SESSION_RECHECK_SECONDS": "0",
        "ANNOTATOR_PAGE_BUSY_SECONDS": " 1.5 ", "ANNOTATOR_HEARTBEAT_TIMEOUT": "1e3",
        "ANNOTATOR_LOG_DIR": str(tmp_path / "logs"), "ANNOTATOR_TMP_DIR": str(tmp_path),
    }
    assert read(values) == Settings(
        database_url="postgresql+psycopg://annotator:pw@db/annotator", session_hours=0.5,
        session_recheck_seconds=0.0, page_busy_seconds=1.5, heartbeat_timeout=1000.0, log_dir=tmp_path / "logs",
        tmp_dir=tmp_path,
    )


def test_every_kind_of_bad_value_is_one_line_naming_the_variable_the_value_and_the_range(tmp_path: Path) -> None:
    cases = _bad_values(tmp_path)
    assert len(cases) > 40
    for name, value, message in cases:
        with pytest.raises(SettingsError) as refused:
            read({name: value})
        assert str(refused.value) == message


def test_a_database_urls_user_and_password_are_not_shown() -> None:
    for url in ("postgres:/annotator:s3cret@db/annotator", "postgresql//annotator:s3/cr@et@db"):
        with pytest.raises(SettingsError) as refused:
            read({"ANNOTATOR_DATABASE_URL": url})
        assert "s3" not in str(refused.value) and "annotator:" not in str(refused.value)
        assert str(refused.value).startswith("ANNOTATOR_DATABASE_URL='postgres")


def test_the_first_bad_variable_is_named_and_a_long_value_cut() -> None:
    with pytest.raises(SettingsError) as refused:
        read({"ANNOTATOR_HEARTBEAT_TIMEOUT": "x" * 500, "ANNOTATOR_TMP_DIR": "/dev/null"})
    shown = "x" * 197 + "..."
    assert str(refused.value) == f"ANNOTATOR_HEARTBEAT_TIMEOUT={shown!r}: a number of seconds from 0.5 to 86,400"


@given(name=st.sampled_from(sorted(NUMBERS)), value=st.floats(allow_nan=True, allow_infinity=True))
def test_a_number_is_read_exactly_when_it_is_in_its_range(name: str, value: float) -> None:
    _allowed, low, high = NUMBERS[name]
    if not math.isnan(value) and low <= value <= high:
        assert getattr(read({name: repr(value)}), FIELDS[name]) == value
    else:
        with pytest.raises(SettingsError, match=re.escape(f"{name}={repr(value)!r}: ")):
            read({name: repr(value)})


def test_the_settings_are_read_once_until_read_again(set_environment: Callable[..., None]) -> None:
    set_environment(ANNOTATOR_SESSION_HOURS="3")
    assert settings().session_hours == 3.0
    os.environ["ANNOTATOR_SESSION_HOURS"] = "soon"  # set_environment's monkeypatch restores it
    assert settings().session_hours == 3.0
    settings.cache_clear()
    with pytest.raises(SettingsError, match="^ANNOTATOR_SESSION_HOURS='soon': "):
        settings()


def test_docs_deploy_has_one_table_row_per_variable_with_its_range_and_default() -> None:
    text = (PROJECT_ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = text.split("\n## Environment variables\n", 1)[1].split("\n## ", 1)[0]
    rows = {match[1]: match[2].replace("`", "")
            for match in re.finditer(r"^\| `(ANNOTATOR_\w+)` \| (.*) \|$", section, re.M)}
    assert list(rows) == list(FIELDS)
    for variable in environment.VARIABLES:
        assert variable.allowed in rows[variable.name], variable.name
    for name, default in (("ANNOTATOR_SESSION_HOURS", "12"), ("ANNOTATOR_SESSION_RECHECK_SECONDS", "60"),
                          ("ANNOTATOR_PAGE_BUSY_SECONDS", "5"), ("ANNOTATOR_HEARTBEAT_TIMEOUT", "60")):
        assert rows[name].endswith(f"| {default}"), rows[name]


def _annotator(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """`annotator stats` forked (`tests/support/cli.py`) in this environment with `variables` set."""
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}", **variables}
    return run_forked(["stats"], env)


def test_the_command_line_refuses_every_kind_of_bad_value_in_one_line_before_it_starts(tmp_path: Path) -> None:
    cases = _bad_values(tmp_path)
    done = [_annotator(tmp_path, **{name: value}) for name, value, _ in cases]
    for (name, value, message), result in zip(cases, done, strict=True):
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {message}\n"), (name, value)
    assert not (tmp_path / "db.sqlite").exists()  # stopped before it opened the database


def test_the_command_line_runs_with_good_values_of_every_variable(tmp_path: Path) -> None:
    done = _annotator(
        tmp_path, ANNOTATOR_SESSION_HOURS="0.5", ANNOTATOR_SESSION_RECHECK_SECONDS="0",
        ANNOTATOR_PAGE_BUSY_SECONDS="1", ANNOTATOR_HEARTBEAT_TIMEOUT="5", ANNOTATOR_LOG_DIR=str(tmp_path / "logs"),
        ANNOTATOR_TMP_DIR=str(tmp_path / "tmp"),
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (tmp_path / "db.sqlite").exists()


def test_help_shows_whatever_the_environment_says(tmp_path: Path) -> None:
    env = {**os.environ, "ANNOTATOR_SESSION_HOURS": "soon"}
    done = subprocess.run([sys.executable, "-m", "annotator", "stats", "--help"], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Usage:" in done.stdout and done.stderr == ""
