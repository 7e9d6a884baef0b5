from __future__ import annotations

import sys

import typer

from annotator.records import InputError

app = typer.Typer(
    name="annotator",
    help="Turn solvable math problems into vetted unsolvable ones, and review how models behave on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def main() -> None:
    try:
        app()
    except InputError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
