"""The typer app every command registers on, and `main`: the one place errors become one-line messages.

Expected errors (bad input, a value out of range, a file that is not there, a database that cannot be
opened, a usage error) print `error: ...` on one line. Anything else is a bug: its traceback goes to a log
file and the user sees one line saying so and where the details are. No traceback reaches the terminal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import typer

# typer 0.29 vendors click: its exceptions are these, not the `click` package's.
from typer._click import exceptions as click_exceptions

from annotator.limits import RangeError
from annotator.records import InputError

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

    from annotator.db import PROJECT_ROOT

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
    except click_exceptions.NoArgsIsHelpError:
        return 0  # the help is already printed: asking for nothing is not an error
    except click_exceptions.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "python -m annotator"
        typer.echo(f"error: {one_line(exc.format_message())} (see {command} --help)", err=True)
        return exc.exit_code
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        return 1
    except click_exceptions.ClickException as exc:
        typer.echo(f"error: {one_line(exc.format_message())}", err=True)
        return exc.exit_code
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
        typer.echo(f"error: {one_line(message)}", err=True)
        code = 1
    sys.exit(code)
