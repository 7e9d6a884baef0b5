"""The one guard every page and every data-changing callback uses.

A page starts with `engine, user = guard.require_page(__file__)`: the page table (`ui.pages`) gives the page's
capability (`policies.Capability`); anyone whose role lacks it gets a clear message and the page stops. Every
page that cannot be shown (kept from a role, or an address no page has: `no_such_page`) looks the same
(`refuse`): a heading, why, and the way on. A callback (which runs before any page code, so before the page's
own guard) that changes data declares its capability (`ui.writes.saves` / `ui.writes.writes`), which asks
`permitted(capability)` before it runs: the sign-in is re-checked against the database when the periodic check
is due, so a disabled account or a changed role writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn
from urllib.parse import unquote, urlparse

import streamlit as st
from sqlalchemy import Engine

from annotator.accounts import auth, policies
from annotator.accounts.policies import Capability
from ui import pages, sign_in
from ui.markdown import escape_markdown

if TYPE_CHECKING:
    from streamlit.navigation.page import StreamlitPage


def _refusal(user: auth.User | None, capability: Capability) -> str:
    who = "please sign in" if user is None else f"you are signed in as {escape_markdown(user.name)} ({user.role})"
    if policies.everyone_may(capability):
        return f"Only signed-in people may open this page; {who}."
    return f"Only {' and '.join(f'{role}s' for role in policies.roles_with(capability))} may open this page; {who}."


def refuse(heading: str, message: str) -> NoReturn:
    """The one look of a page that cannot be shown: its heading, why (an error), the way on; stops the page.
    `message` is Markdown: anything from data in it must be escaped."""
    st.title(heading)
    st.error(message)
    st.caption("Choose a page in the sidebar.")
    st.stop()


def asked_for() -> str:
    """The page the browser's address names (its last path segment; '' for the app's root)."""
    return urlparse(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]


def no_such_page() -> None:
    """The page for an address no page has (`/nosuchpage`): says so, instead of showing another page."""
    refuse("No such page", f"There is no page at /{escape_markdown(unquote(asked_for()))}.")


def open_start(start: StreamlitPage) -> Callable[[], None]:
    """The page of the app's root (`/`): it opens `start` (the start page) at that page's own address, keeping the
    query string, so the navigation shows which page is open and the address in the browser is the page's."""

    def root() -> None:
        st.switch_page(start, query_params=st.query_params.to_dict())

    return root


def require(capability: Capability) -> tuple[Engine, auth.User]:
    """The app's engine and the signed-in user, or a message and `st.stop()` if the user's role may not do
    `capability`."""
    user = st.session_state.get("user")
    if not auth.allows(user, capability):
        refuse("Not open to you", _refusal(user, capability))
    return st.session_state["engine"], user


def require_page(file: str) -> tuple[Engine, auth.User]:
    """A page's guard (`guard.require_page(__file__)`): `require` with the capability the page table gives it."""
    return require(pages.page(file).capability)


def permitted(capability: Capability) -> bool:
    """In a callback: whether the signed-in user (re-checked when due) still may do `capability`."""
    user = sign_in.recheck(st.session_state["engine"])
    if user is not None and not auth.allows(user, capability):
        st.toast(_refusal(user, capability))
    return auth.allows(user, capability)
