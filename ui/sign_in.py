"""Signing in and out in the browser, and the signed-in user, for app.py, the guard and fragments.

A sign-in lasts across reruns and page reloads: the browser keeps a session token in a cookie, which
Streamlit hands back in `st.context.cookies` when the page is loaded again. The token is re-checked
(expired? account disabled?) every `auth.sign_in_recheck_seconds()`, not on every rerun.
"""

from __future__ import annotations

import time

import streamlit as st
from sqlalchemy import Engine

from annotator import auth, queue
from annotator.db import read_session, write_session

COOKIE = "annotator_session"


def cookie_script(token: str | None) -> None:
    """Store (or clear) the token in a cookie. The script holds only a token `auth.is_token` accepted."""
    if token is not None and not auth.is_token(token):
        return
    value, max_age = (token, int(auth.sign_in_lifetime().total_seconds())) if token else ("", 0)
    st.html(
        f'<script>document.cookie = "{COOKIE}={value}; Max-Age={max_age}; Path=/; SameSite=Strict";</script>',
        unsafe_allow_javascript=True,
        width="content",
    )


def _recheck_at() -> float:
    return time.monotonic() + auth.sign_in_recheck_seconds()


def sign_in(user: auth.User, token: str) -> None:
    st.session_state["user"] = user
    st.session_state["auth_token"] = token
    st.session_state["auth_recheck_at"] = _recheck_at()


def sign_out() -> None:
    engine = st.session_state["engine"]
    user = st.session_state.get("user")
    with write_session(engine) as session:
        auth.end_sign_in(session, token=st.session_state.get("auth_token"))
        if user is not None:
            queue.release(session, annotator_id=user.id)
    for key in list(st.session_state):
        if key != "engine":
            del st.session_state[key]
    st.session_state["cookie_action"] = "clear"
    st.session_state["cookie_checked"] = True  # the old cookie is dead; do not look at it again


def recheck(engine: Engine) -> auth.User | None:
    """The signed-in user, re-checked against the database when the check is due; None once signed out.

    A page whose fragment reruns without app.py calls this and, on None, asks for a whole run (which then
    shows the sign-in form with the reason).
    """
    user: auth.User | None = st.session_state.get("user")
    if user is None or time.monotonic() <= st.session_state.get("auth_recheck_at", 0):
        return user
    with read_session(engine) as session:
        found = auth.user_for_token(session, token=st.session_state.get("auth_token"))
    if found is None:
        sign_out()
        st.session_state["auth_message"] = "Your session ended; please sign in again."
        return None
    st.session_state["user"] = found[0]
    st.session_state["auth_recheck_at"] = _recheck_at()
    return found[0]


def current_user(engine: Engine) -> auth.User | None:
    """The signed-in user: from this session, else from the cookie of a reloaded page."""
    if st.session_state.get("user") is not None:
        return recheck(engine)
    if not st.session_state.get("cookie_checked"):
        st.session_state["cookie_checked"] = True
        token = st.context.cookies.get(COOKIE)
        if token:
            with read_session(engine) as session:
                found = auth.user_for_token(session, token=token)
            if found is not None:
                sign_in(found[0], token)
                return found[0]
    return None
