"""Every write a page makes: `with page_write(engine, user=user) as session:` inside a callback decorated with
`@saves(state, "label", capability=Capability.X)` (or `@writes(Capability.X)` for one that reports its own
failures).

The decorator declares what the callback does (a `policies.Capability`): the callback runs only when the
signed-in user may do it (`guard.permitted`, re-checked against the database when due), and every `page_write`
inside it checks that same capability. `page_write` is a write transaction that waits for a lock at most
`db.page_busy_seconds()` (an admin's import holds SQLite's write lock for seconds; a person should not stare at
a frozen page that long) and that first checks, in the same transaction, that the account is still active and
its role may do the declared capability (`auth.check_writer`): a disabled account writes nothing from the
moment it is disabled, not from the next periodic sign-in check. A `page_write` outside a declaring callback
is a bug and raises (`tests/test_layout.py` also finds such callbacks without running them).

`saves` is the one place a page's write failure becomes a message: busy becomes the one-line "the database is
busy, your label was not saved, press again" in the page's status line (the page's `state["message"]`); the
callback raised before changing `state`, so the candidate stays on screen and the same key saves it. A disabled
account is signed out with the reason. Neither shows a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, ParamSpec, TypeVar

import streamlit as st
from sqlalchemy import Engine
from sqlmodel import Session

from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.database.engine import DatabaseBusy, page_busy_seconds, write_session
from ui import guard, sign_in

P = ParamSpec("P")
R = TypeVar("R")
# The capability the running callback declared (`writes`); what its `page_write`s check.
_declared: ContextVar[Capability | None] = ContextVar("declared_capability", default=None)


def busy_message(what: str) -> str:
    return f"The database is busy, your {what} was not saved, press again."


@contextmanager
def declaring(capability: Capability) -> Iterator[None]:
    """Writes inside this block check `capability` (what `writes` sets around a callback; for tests and benches
    that write as a page does, outside a callback)."""
    token = _declared.set(capability)
    try:
        yield
    finally:
        _declared.reset(token)


def declared() -> Capability:
    """The capability the running callback declared; a write without one is a bug."""
    capability = _declared.get()
    if capability is None:
        raise RuntimeError("a page write outside a callback that declares its capability (ui.writes.saves/writes)")
    return capability


def authorize(user: auth.User) -> Callable[[Session], None]:
    """`auth.check_writer` for `user` and the declared capability, for a core write that takes an `authorize`
    (an import checks it in its own transaction)."""
    return partial(auth.check_writer, user_id=user.id, capability=declared())


@contextmanager
def page_write(engine: Engine, *, user: auth.User) -> Iterator[Session]:
    """A write transaction for a page: raises `DatabaseBusy` after `db.page_busy_seconds()` of waiting for a
    lock, and `auth.AccountDisabled` when `user` may no longer do the declared capability; either way nothing is
    written."""
    capability = declared()
    with write_session(engine, busy_seconds=page_busy_seconds()) as session:
        auth.check_writer(session, user_id=user.id, capability=capability)
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


def writes(capability: Capability) -> Callable[[Callable[P, R]], Callable[P, R | None]]:
    """Decorate a page callback that writes and reports its own failures: it runs only if the signed-in user
    may do `capability` (else None, with the guard's message), and its writes check `capability`."""

    def decorate(callback: Callable[P, R]) -> Callable[P, R | None]:
        @functools.wraps(callback)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:
            if not guard.permitted(capability):
                return None
            with declaring(capability):
                return callback(*args, **kwargs)

        wrapper.capability = capability  # type: ignore[attr-defined]
        return wrapper

    return decorate


def saves(
    state: MutableMapping[str, Any] | Callable[[], MutableMapping[str, Any]], what: str, *,
    capability: Capability, busy: str | None = None,
) -> Callable[[Callable[P, None]], Callable[P, None]]:
    """Decorate a page callback that writes: `writes(capability)`, its write run in `reported(state, what,
    busy=busy)` (`state` or, for a module shared by pages, a function giving the session's state)."""

    def decorate(callback: Callable[P, None]) -> Callable[P, None]:
        declaring_callback = writes(capability)(callback)

        @functools.wraps(callback)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
            with reported(state if isinstance(state, MutableMapping) else state(), what, busy=busy):
                declaring_callback(*args, **kwargs)

        wrapper.capability = capability  # type: ignore[attr-defined]
        return wrapper

    return decorate
