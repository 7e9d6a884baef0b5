"""The typer app every command registers on, and `main`: the one place errors become one-line messages.

Expected errors (bad input, a value out of range, a file that is not there, a database that cannot be
opened, a usage error) print `error: ...` on one line (several bad files: one such line each). Anything else
is a bug: its traceback goes to a log file and the user sees one line saying so and where the details are.
No traceback reaches the terminal.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from annotator.import_export.records import InputError, InputErrors
from annotator.settings.limits import Range, RangeError

app = typer.Typer(
    name="annotator",
    help="Turn solvable math problems into vetted unsolvable ones, and review how models behave on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def bounded(allowed: Range) -> dict[str, Any]:
    """typer.Option's check and metavar for a range: `typer.Option(help=..., **bounded(limits.SAMPLES))`; a value
    outside it is a usage error naming the option, the value and the range."""

    def check(value: Any) -> Any:
        if value is not None and not allowed.contains(value):  # None: an optional option not given
            raise typer.BadParameter(f"must be {allowed.describe()}, got {value!r}"[:200])
        return value

    return {"callback": check, "metavar": allowed.span()}


def out_directory(path: Path, option: str = "--out") -> Path:
    """An output directory option: refused (one line, exit 2) when it names a file."""
    if path.exists() and not path.is_dir():
        fail(f"{option} {path} is a file; give a directory", 2)
    return path


def one_line(text: str) -> str:
    """The first non-empty line of a message (database drivers write several)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _expected(exc: BaseException) -> str | None:
    """The one-line message for an error the user can fix, or None for a bug."""
    if isinstance(exc, (InputError, RangeError)):
        return str(exc)
    if isinstance(exc, UnicodeError):
        return f"not valid UTF-8: {exc}"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

    if isinstance(exc, DBAPIError):
        return f"the database failed: {one_line(str(exc.orig))}"
    if isinstance(exc, (ArgumentError, NoSuchModuleError)):
        return f"the database URL (ANNOTATOR_DATABASE_URL) cannot be used: {one_line(str(exc))}"
    return None


def _log_internal_error(exc: BaseException) -> str:
    """Append the traceback to the error log (in `ANNOTATOR_LOG_DIR`, default `logs/`); returns its path."""
    import logging
    import os
    import tempfile

    from annotator.database.engine import PROJECT_ROOT

    chosen = Path(os.environ.get("ANNOTATOR_LOG_DIR") or PROJECT_ROOT / "logs")
    for folder in (chosen, Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / "annotator-errors.log"
            with path.open("a", encoding="utf-8") as handle:
                handler = logging.StreamHandler(handle)
                handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
                record = logging.LogRecord("annotator", logging.ERROR, "", 0, "command %s failed", (sys.argv,),
                                           (type(exc), exc, exc.__traceback__))
                handler.emit(record)
            return str(path)
        except OSError:
            continue
    return "nowhere (no writable log folder)"


def _run() -> int:
    try:
        result = app(standalone_mode=False)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        return 1
    except typer.TyperException as exc:  # click's usage and parameter errors (typer vendors click)
        if type(exc).__name__ == "NoArgsIsHelpError":
            return 0  # the help is already printed: asking for nothing is not an error
        message = one_line(exc.format_message()) if hasattr(exc, "format_message") else one_line(str(exc))
        context = getattr(exc, "ctx", None)
        see = f" (see {context.command_path} --help)" if context is not None else ""
        typer.echo(f"error: {message}{see}", err=True)
        return int(getattr(exc, "exit_code", 2))
    return result if isinstance(result, int) else 0


def main() -> None:
    try:
        code = _run()
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        code = 130
    except BrokenPipeError:
        # The reader went away (`... | head`): nothing more to say, and nothing to flush at exit.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    except Exception as exc:  # the one place every error ends: never a traceback on the terminal
        message = _expected(exc)
        if message is None:
            where = _log_internal_error(exc)
            message = f"internal error ({type(exc).__name__}: {one_line(str(exc))[:200]}); details in {where}"
        # Several bad files: one line each.
        for line in [str(error) for error in exc.errors] if isinstance(exc, InputErrors) else [message]:
            typer.echo(f"error: {one_line(line)}", err=True)
        code = 1
    # What is alive now is freed by reference counting as the interpreter ends; frozen, it is not also walked by
    # the collector's last passes (with SQLAlchemy, pydantic and numpy loaded: about 0.15 s of `report`'s exit).
    gc.freeze()
    sys.exit(code)
