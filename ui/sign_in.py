"""Signing in and out in the browser, and the signed-in user, for app.py, the guard and fragments.

A sign-in lasts across reruns and page reloads: the browser keeps a session token in a cookie, which
Streamlit hands back in `st.context.cookies` when the page is loaded again. The token is re-checked
(expired? account disabled?) every `auth.sign_in_recheck_seconds()`, not on every rerun.

When `.streamlit/secrets.toml` has an `[auth]` section, people may also sign in through the identity provider it
names (Streamlit's `st.login`, OpenID Connect). Streamlit then keeps the provider's ID-token claims in its own
signed, HttpOnly cookie (`_streamlit_user`) and hands them to each new browser session as `st.user`; this module
turns them into a sign-in to the account an admin gave that identity (`auth.sign_in_identity`), once per browser
session, with the same token and re-checks as a password's. Signing out ends both.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from annotator.accounts import auth
from annotator.database.engine import DatabaseBusy, read_session, write_session
from annotator.labelling import browser_adjudication, queue
from ui import session_cookie

COOKIE = session_cookie.COOKIE
# What the identity provider's sign-in is called on the button when `[auth]` names none (`display_name`).
DEFAULT_PROVIDER_LABEL = "the identity provider"


@dataclass(frozen=True)
class Provider:
    """An identity provider `[auth]` configures: the name `st.login` takes (None: `[auth]`'s own settings) and
    the name on its button (`display_name` in its section)."""

    name: str | None
    label: str


def providers() -> list[Provider]:
    """The identity providers `.streamlit/secrets.toml`'s `[auth]` section configures; none without one."""
    if not st.secrets.load_if_toml_exists() or not isinstance(section := st.secrets.get("auth"), Mapping):
        return []
    named = [
        Provider(name, str(value.get("display_name") or name))
        for name, value in section.items()
        if isinstance(value, Mapping) and ("client_id" in value or "server_metadata_url" in value)
    ]
    if "client_id" in section or "server_metadata_url" in section:
        named.insert(0, Provider(None, str(section.get("display_name") or DEFAULT_PROVIDER_LABEL)))
    return named


def _provider_signed_in() -> bool:
    """Whether Streamlit's cookie says the identity provider signed this browser in (`st.user`)."""
    return bool(providers()) and bool(st.user.get("is_logged_in"))


def cookie_script(token: str | None) -> None:
    """Store (or clear) the token in a cookie for a sign-in's lifetime.

    Served through `server.py`, the server sets it, HttpOnly: the page posts a one-time code, never the token
    (`ui.session_cookie`). Otherwise the page's script writes it. The script holds only a token `auth.is_token`
    accepted, or a code `secrets.token_urlsafe` made.
    """
    if token is not None and not auth.is_token(token):
        return
    max_age = int(auth.sign_in_lifetime().total_seconds())
    same_origin = 'credentials: "same-origin"'
    if session_cookie.served() and token:
        code = session_cookie.issue(st.session_state["engine"], token=token, max_age=max_age)
        script = f'fetch("{session_cookie.SESSION_PATH}", {{method: "POST", body: "{code}", {same_origin}}})'
    elif session_cookie.served():
        script = f'fetch("{session_cookie.SIGN_OUT_PATH}", {{method: "POST", {same_origin}}})'
    else:
        value, age = (token, max_age) if token else ("", 0)
        script = f'document.cookie = "{COOKIE}={value}; Max-Age={age}; Path=/; SameSite=Strict";'
    st.html(f"<script>{script}</script>", unsafe_allow_javascript=True, width="content")


def _recheck_at() -> float:
    return time.monotonic() + auth.sign_in_recheck_seconds()


def sign_in(user: auth.User, token: str) -> None:
    st.session_state["user"] = user
    st.session_state["auth_token"] = token
    st.session_state["auth_recheck_at"] = _recheck_at()


def sign_out(*, provider: bool = True) -> None:
    """End the sign-in: its token, its claims, this browser session's state, the cookie; and, with `provider`
    (the Sign out button), the identity provider's sign-in (Streamlit's cookie, and the provider's own session
    when it offers to end it). A re-check that finds the sign-in over passes False, so the page can say why."""
    engine = st.session_state["engine"]
    user = st.session_state.get("user")
    with write_session(engine) as session:
        auth.end_sign_in(session, token=st.session_state.get("auth_token"))
        if user is not None:
            queue.release(session, annotator_id=user.id)
            browser_adjudication.release(session, reviewer_id=user.id)
    for key in list(st.session_state):
        if key != "engine":
            del st.session_state[key]
    st.session_state["cookie_action"] = "clear"
    st.session_state["cookie_checked"] = True  # the old cookie is dead; do not look at it again
    if provider and _provider_signed_in():
        st.logout()  # Streamlit clears its cookie, then sends the browser to the provider's end of session


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
        sign_out(provider=False)
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
    return _provider_user(engine)


def _provider_user(engine: Engine) -> auth.User | None:
    """The account the identity provider's sign-in names, looked up once per browser session; a refusal
    (`auth.IdentityRefused`) is kept in `identity_refused` for the sign-in page to explain."""
    if st.session_state.get("identity_checked") or not _provider_signed_in():
        return None
    try:
        signed_in = auth.sign_in_identity(engine, claims=st.user.to_dict())
    except auth.IdentityRefused as exc:
        st.session_state["identity_checked"] = True
        st.session_state["identity_refused"] = exc
        return None
    except (DatabaseBusy, OperationalError):
        st.session_state["auth_message"] = "The database is busy; please reload the page to sign in."
        return None
    st.session_state["identity_checked"] = True
    sign_in(*signed_in)
    return signed_in[0]
