"""The one guard every page and every data-changing callback uses.

A page starts with `engine, user = guard.require(Role.admin)` (no roles: anyone signed in): it shows a clear
message and stops the page for anyone else. A callback (which runs before any page code, so before the
page's own guard) that changes data starts with `if not guard.permitted(Role.admin): return`: the sign-in is
re-checked against the database when the periodic check is due, so a disabled account or a changed role
writes nothing.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine

from annotator import auth
from annotator.vocabulary import Role
from ui import sign_in

EVERYONE = tuple(Role)


def _refusal(user: auth.User | None, roles: tuple[str, ...]) -> str:
    who = "please sign in" if user is None else f"you are signed in as {user.name} ({user.role})"
    if set(roles) == set(EVERYONE):
        return f"Only signed-in people may open this page; {who}."
    return f"Only {' and '.join(f'{role}s' for role in roles)} may open this page; {who}."


def require(*roles: str) -> tuple[Engine, auth.User]:
    """The app's engine and the signed-in user, or a message and `st.stop()` if the user lacks every role."""
    roles = roles or EVERYONE
    user = st.session_state.get("user")
    if user is None or not auth.allows(user, *roles):
        st.error(_refusal(user, roles))
        st.stop()
    return st.session_state["engine"], user


def permitted(*roles: str) -> bool:
    """In a callback: whether the signed-in user (re-checked when due) still has one of `roles`."""
    roles = roles or EVERYONE
    user = sign_in.recheck(st.session_state["engine"])
    if user is not None and not auth.allows(user, *roles):
        st.toast(_refusal(user, roles))
    return auth.allows(user, *roles)
