"""The settings the app and the command line take from the environment (`ANNOTATOR_*`), declared, typed and
ranged in one place (`VARIABLES`) and read once: `settings()`.

Every command (`annotator.cli._app`) and the app (server.py, app.py) read them as they start, so a value that is
not allowed stops them at once with one line naming the variable, the value and what is allowed (`SettingsError`),
e.g. `ANNOTATOR_SESSION_HOURS='soon': a number of hours from 0.1 to 8,760`. An empty variable counts as unset.
Tests that change the environment call `settings.cache_clear()` so that the next `settings()` reads it again.

Imports nothing heavy: the command line reads it before every command.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotator.settings import limits

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATABASE_PATH = PROJECT_ROOT / "db" / "annotator.sqlite"
DEFAULT_SESSION_HOURS = 12.0
# How often a signed-in browser re-checks its token (expired? account disabled?), not on every rerun.
DEFAULT_SESSION_RECHECK_SECONDS = 60.0
# How long a page's write (a label, a decision, a review) waits for the lock before the page says the database is
# busy and the press can be repeated: long enough for any write but an import's, short enough to keep a person in
# front of a frozen page for no longer than this.
DEFAULT_PAGE_BUSY_SECONDS = 5.0
# A running run's worker beats every few seconds; one silent this long has died (killed, crashed, its machine
# gone). Every app server and worker of a database should see the same value.
DEFAULT_HEARTBEAT_TIMEOUT = 60.0
# SQLAlchemy's URL form: DIALECT[+DRIVER]://...
_URL = re.compile(r"^[\w+]+://")
_SCHEME = re.compile(r"[\w+]*:?/*")
_SHOWN_CHARS = 200


class SettingsError(ValueError):
    """An `ANNOTATOR_*` variable whose value is not allowed; the message is one line."""


@dataclass(frozen=True)
class Settings:
    """The environment's settings, each as its variable gives it or its default."""

    database_url: str
    session_hours: float
    session_recheck_seconds: float
    page_busy_seconds: float
    heartbeat_timeout: float
    log_dir: Path
    tmp_dir: Path


@dataclass(frozen=True)
class Variable:
    """One `ANNOTATOR_*` variable: the `Settings` field it sets, what it allows (as the error and docs/deploy.md's
    table say it), its default (a function: some depend on the machine) and how its text becomes the value."""

    name: str
    field: str
    allowed: str
    default: Callable[[], Any]
    parse: Callable[[str], Any]


def _number(allowed: limits.Range) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise SettingsError from None
        if not allowed.contains(value):  # NaN, infinities and values out of range
            raise SettingsError
        return value

    return parse


def _url(text: str) -> str:
    if not _URL.match(text):
        raise SettingsError
    return text


def _folder(text: str) -> Path:
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise SettingsError
    return path


def _numeric(allowed: limits.Range, field: str, default: float) -> Variable:
    return Variable(allowed.name, field, allowed.describe(), lambda: default, _number(allowed))


VARIABLES: tuple[Variable, ...] = (
    Variable("ANNOTATOR_DATABASE_URL", "database_url",
             "a database URL: sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/NAME",
             lambda: f"sqlite:///{DEFAULT_DATABASE_PATH}", _url),
    _numeric(limits.SESSION_HOURS, "session_hours", DEFAULT_SESSION_HOURS),
    _numeric(limits.SESSION_RECHECK_SECONDS, "session_recheck_seconds", DEFAULT_SESSION_RECHECK_SECONDS),
    _numeric(limits.PAGE_BUSY_SECONDS, "page_busy_seconds", DEFAULT_PAGE_BUSY_SECONDS),
    _numeric(limits.HEARTBEAT_TIMEOUT, "heartbeat_timeout", DEFAULT_HEARTBEAT_TIMEOUT),
    Variable("ANNOTATOR_LOG_DIR", "log_dir", "a folder (not a file)", lambda: PROJECT_ROOT / "logs", _folder),
    Variable("ANNOTATOR_TMP_DIR", "tmp_dir", "a folder (not a file)",
             lambda: Path(tempfile.gettempdir()) / "annotator-uploads", _folder),
)


def _shown(text: str, *, url: bool) -> str:
    """The value as the error quotes it: a URL's user and password hidden, a long value cut."""
    if url and "@" in text:
        before, _, after = text.rpartition("@")
        scheme = _SCHEME.match(before)
        text = f"{scheme.group() if scheme else ''}***@{after}"
    return repr(text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 3] + "...")


def read(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings `environ` (default: this process's environment) gives; SettingsError names the first variable
    whose value is not allowed."""
    environ = os.environ if environ is None else environ
    values = {}
    for variable in VARIABLES:
        text = environ.get(variable.name, "")
        try:
            values[variable.field] = variable.parse(text) if text else variable.default()
        except SettingsError:
            shown = _shown(text, url=variable.parse is _url)
            raise SettingsError(f"{variable.name}={shown}: {variable.allowed}") from None
    return Settings(**values)


@functools.cache
def settings() -> Settings:
    """This process's settings, read from the environment on first use (`read`); `settings.cache_clear()` makes
    the next call read it again."""
    return read()
