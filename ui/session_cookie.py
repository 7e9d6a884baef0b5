"""The sign-in cookie set by the server, HttpOnly, when the app is served through `server.py` (`st.App`).

A page's script runs over Streamlit's websocket after the page's HTTP response has gone, so it cannot send a
`Set-Cookie` itself, and `st.context.cookies` only reads. Streamlit 1.67's `st.App` lets the app add its own HTTP
routes next to Streamlit's: `server.py` mounts `ROUTES`, and the script hands the browser a one-time code
(`issue`) that the page posts to `/_annotator/session`; that route answers with the token in an HttpOnly,
SameSite=Strict cookie, which no script in the page can read, and Streamlit hands back in `st.context.cookies` on
the next visit. The code is useless after one use or `sign_in_codes.HANDOFF_SECONDS`, and never the token itself.
The codes are kept in the database (`annotator.sign_in_codes`), so the POST, a plain HTTP request, may reach any
of several app servers, not only the one whose websocket holds the page. `/_annotator/sign-out` deletes the
cookie (the token is already ended in the database by then).

Served by a plain `streamlit run app.py`, these routes do not exist (`served()` is False) and `ui.sign_in` falls
back to writing the cookie from the page's script.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from annotator import auth, sign_in_codes
from annotator.db import database_url, get_engine

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

COOKIE = "annotator_session"
SESSION_PATH = "/_annotator/session"
SIGN_OUT_PATH = "/_annotator/sign-out"
# Set by server.py (`served()`) when it mounts the routes: an environment variable, not a module global, so that a
# module reloaded by Streamlit's file watcher still knows.
SERVED_VARIABLE = "ANNOTATOR_COOKIE_ROUTES"


def served() -> bool:
    """Whether this process serves the routes (the app runs through `server.py`)."""
    return os.environ.get(SERVED_VARIABLE) == "1"


def issue(engine: Engine, *, token: str, max_age: int) -> str:
    """A one-time code the page posts to `SESSION_PATH` (on any app server of this database) to get `token` as its
    cookie."""
    return sign_in_codes.issue(engine, token=token, max_age=max_age)


def _redeem(code: str) -> tuple[str, int] | None:
    # The app's database (`database_url()`, as app.py opens it): this process's one engine for it.
    return sign_in_codes.redeem(get_engine(database_url()), code=code)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


async def _session(request: Request) -> Response:
    from starlette.responses import Response

    code = (await request.body()).decode("ascii", "replace").strip()
    try:
        redeemed = await asyncio.to_thread(_redeem, code)  # a database write: off the server's event loop
    except DBAPIError:
        return Response(status_code=503)  # the database is down or busy: the page's sign-in stays, the cookie not
    if redeemed is None or not auth.is_token(redeemed[0]):
        return Response(status_code=403)
    response = Response(status_code=204)
    response.set_cookie(COOKIE, redeemed[0], max_age=redeemed[1], path="/", httponly=True, samesite="strict",
                        secure=_secure(request))
    return response


async def _sign_out(request: Request) -> Response:
    from starlette.responses import Response

    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=_secure(request))
    return response


def routes() -> list[object]:
    """The two routes `server.py` mounts (POST only: a link cannot trigger them)."""
    from starlette.routing import Route

    return [Route(SESSION_PATH, _session, methods=["POST"]), Route(SIGN_OUT_PATH, _sign_out, methods=["POST"])]
