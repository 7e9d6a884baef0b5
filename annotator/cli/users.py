"""Account commands: `user add`, `user list`, `user disable`, `user enable`, `user password`, `user unlock`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from annotator.cli._app import app, fail
from annotator.database.vocabulary import Role

ROLES = tuple(role.value for role in Role)

users = typer.Typer(help="Accounts that can sign in to the app.", no_args_is_help=True)
app.add_typer(users, name="user")


def _read_password(password_stdin: bool) -> str:
    if password_stdin:
        # One line from stdin, without its line ending (so `echo secret | ... --password-stdin` works).
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        if not sys.stdin.isatty():  # getpass would warn over several lines, then read nothing
            fail("no terminal to ask for the password: pipe it in with --password-stdin", 2)
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    if not password:
        fail("the password must not be empty", 2)
    return password


@users.command("add")
def add(
    name: Annotated[
        str | None, typer.Argument(help="The name people sign in with (default: the --oidc address or subject).")
    ] = None,
    role: Annotated[str, typer.Option(help=f"One of: {', '.join(ROLES)}.")] = "annotator",
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from stdin.")] = False,
    oidc: Annotated[
        str | None,
        typer.Option("--oidc", metavar="EMAIL", help="Signs in through the identity provider with this e-mail "
                     "address (any case); no password unless --password-stdin."),
    ] = None,
    oidc_subject: Annotated[
        str | None,
        typer.Option("--oidc-subject", metavar="SUB", help="Signs in through the identity provider as this "
                     "subject (its `sub`, exactly); no password unless --password-stdin."),
    ] = None,
) -> None:
    """Add an account: with a password (asked for, or read from stdin; stored as an Argon2 hash), or signing in
    through the identity provider (--oidc EMAIL or --oidc-subject SUB), or both."""
    if role not in ROLES:
        fail(f"unknown role {role!r}; choose one of {', '.join(ROLES)}", 2)
    name = name or (oidc.strip().lower() if oidc else None) or oidc_subject
    if name is None:
        fail("give the account's NAME, or --oidc EMAIL / --oidc-subject SUB", 2)
    through_provider = oidc is not None or oidc_subject is not None
    password = _read_password(password_stdin) if password_stdin or not through_provider else None
    user = _change_accounts(lambda session, auth: auth.create_user(
        session, name=name, role=role, password=password, oidc_email=oidc, oidc_subject=oidc_subject))
    typer.echo(f"added {user.name} ({user.role})")


@users.command("list")
def list_command(
    all_: Annotated[bool, typer.Option("--all", help="Also list import/pipeline pseudo-annotators.")] = False,
) -> None:
    """Accounts with their role and whether they are active."""
    from annotator.accounts import auth
    from annotator.database.engine import get_engine, read_session

    with read_session(get_engine()) as session:
        rows = auth.list_users(session, include_system=all_)
    for row in rows:
        state = "system" if row["is_system"] else ("active" if row["is_active"] else "disabled")
        identity = row["oidc_email"] or row["oidc_subject"]
        typer.echo(f"{row['name']}\t{row['role']}\t{state}" + (f"\t{identity}" if identity else ""))


def _change_accounts(change: Callable[[Any, Any], Any]) -> Any:
    """`change(session, auth)` in one transaction; a refused change (`AuthError`) is a one-line error."""
    from annotator.accounts import auth  # imported when used: `--help` stays fast
    from annotator.database.engine import get_engine, write_session

    try:
        with write_session(get_engine()) as session:
            return change(session, auth)
    except auth.AuthError as exc:
        fail(str(exc))


def _set_active(name: str, active: bool) -> None:
    _change_accounts(lambda session, auth: auth.set_active(session, name=name, active=active))
    typer.echo(f"{'enabled' if active else 'disabled'} {name}")


@users.command("disable")
def disable(name: str) -> None:
    """Stop an account from signing in and end its sessions; its labels stay."""
    _set_active(name, False)


@users.command("enable")
def enable(name: str) -> None:
    """Let a disabled account sign in again (its failed sign-ins are forgotten)."""
    _set_active(name, True)


@users.command("password")
def password(
    name: str,
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from stdin.")] = False,
) -> None:
    """Set a new password (ends the account's sessions, forgets its failed sign-ins)."""
    new = _read_password(password_stdin)
    _change_accounts(lambda session, auth: auth.set_password(session, name=name, password=new))
    typer.echo(f"changed the password of {name}")


@users.command("unlock")
def unlock(name: str) -> None:
    """Forget the account's failed sign-ins, so that it signs in at once from anywhere."""
    _change_accounts(lambda session, auth: auth.unlock(session, name=name))
    typer.echo(f"unlocked {name}")
