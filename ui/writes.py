"""Every write a page makes: `with page_write(engine, user=user, roles=...) as session:` inside a callback
decorated with `@saves(state, "label")`.

`page_write` is a write transaction that waits for a lock at most `db.page_busy_seconds()` (an admin's import
holds SQLite's write lock for seconds; a person should not stare at a frozen page that long) and that first
checks, in the same transaction, that the account is still active and has the role (`auth.check_writer`): a
disabled account writes nothing from the moment it is disabled, not from the next periodic sign-in check.

`saves` is the one place a page's write failure becomes a message: busy becomes the one-line "the database is
busy, your label was not saved, press again" in the page's status line (the page's `state["message"]`); the
callback raised before changing `state`, so the candidate stays on screen and the same key saves it. A disabled
account is signed out with the reason. Neither shows a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, ParamSpec

import streamlit as st
from sqlalchemy import Engine
from sqlmodel import Session

from annotator import auth
from annotator.db import DatabaseBusy, page_busy_seconds, write_session
from annotator.vocabulary import Role
from ui import sign_in

P = ParamSpec("P")


def busy_message(what: str) -> str:
    return f"The database is busy, your {what} was not saved, press again."


@contextmanager
def page_write(engine: Engine, *, user: auth.User, roles: tuple[str, ...] = tuple(Role)) -> Iterator[Session]:
    """A write transaction for a page: raises `DatabaseBusy` after `db.page_busy_seconds()` of waiting for a
    lock, and `auth.AccountDisabled` when `user` may no longer write; either way nothing is written."""
    with write_session(engine, busy_seconds=page_busy_seconds()) as session:
        auth.check_writer(session, user_id=user.id, roles=roles)
        yield session


@contextmanager
def reported(state: MutableMapping[str, Any], what: str, *, busy: str | None = None) -> Iterator[None]:
    """Run a page write: a busy database (`busy_message(what)`, or `busy`) becomes `state["message"]`, a disabled
    account signs out with the reason; neither shows a traceback."""
    try:
        yield
    except DatabaseBusy:
        state["message"] = busy or busy_message(what)
    except auth.AccountDisabled as exc:
        signed_out(exc)


def signed_out(exc: auth.AccountDisabled) -> None:
    """Sign out an account that may no longer write; the sign-in page says why."""
    sign_in.sign_out()
    st.session_state["auth_message"] = f"Signed out: {exc}."


def saves(
    state: MutableMapping[str, Any], what: str, *, busy: str | None = None
) -> Callable[[Callable[P, None]], Callable[P, None]]:
    """Decorate a page callback that writes: its write runs `reported(state, what, busy=busy)`."""

    def decorate(callback: Callable[P, None]) -> Callable[P, None]:
        @functools.wraps(callback)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
            with reported(state, what, busy=busy):
                callback(*args, **kwargs)

        return wrapper

    return decorate
