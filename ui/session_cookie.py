"""The sign-in cookie set by the server, HttpOnly, when the app is served through `server.py` (`st.App`).

A page's script runs over Streamlit's websocket after the page's HTTP response has gone, so it cannot send a
`Set-Cookie` itself, and `st.context.cookies` only reads. Streamlit 1.67's `st.App` lets the app add its own HTTP
routes next to Streamlit's: `server.py` mounts `ROUTES`, and the script hands the browser a one-time code
(`issue`) that the page posts to `/_annotator/session`; that route answers with the token in an HttpOnly,
SameSite=Strict cookie, which no script in the page can read, and Streamlit hands back in `st.context.cookies` on
the next visit. The code is useless after one use or `sign_in_codes.HANDOFF_SECONDS`, and never the token itself.
The codes are kept in the database (`annotator.accounts.sign_in_codes`), so the POST, a plain HTTP request, may reach
any of several app servers, not only the one whose websocket holds the page. `/_annotator/sign-out` deletes the
cookie (the token is already ended in the database by then).

Both routes refuse a body over `MAX_BODY_BYTES` before reading it (413): by its Content-Length, or, sent without
one (chunked), once what came is over; Streamlit's server (uvicorn) sets no such limit of its own. The session
route refuses a client that posted too many wrong codes (429, with Retry-After; `ui.code_throttle`) before it asks
the database. The client is the connection's address, or the one a trusted proxy names in
X-Forwarded-For (uvicorn trusts `FORWARDED_ALLOW_IPS`, by default 127.0.0.1 and ::1; docs/deploy.md).

Served by a plain `streamlit run app.py`, these routes do not exist (`served()` is False) and `ui.sign_in` falls
back to writing the cookie from the page's script.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from annotator.accounts import auth, sign_in_codes
from annotator.database.engine import database_url, get_engine
from ui.code_throttle import CodeThrottle

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

COOKIE = "annotator_session"
SESSION_PATH = "/_annotator/session"
SIGN_OUT_PATH = "/_annotator/sign-out"
# Set by server.py (`served()`) when it mounts the routes: an environment variable, not a module global, so that a
# module reloaded by Streamlit's file watcher still knows.
SERVED_VARIABLE = "ANNOTATOR_COOKIE_ROUTES"
MAX_BODY_BYTES = 1024  # a code is 43 characters
_THROTTLE = CodeThrottle()


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


def _too_large() -> Response:
    from starlette.responses import Response

    # Closing the connection: the server reads no more of a body it refused.
    return Response(status_code=413, headers={"Connection": "close"})


def _declared_too_large(request: Request) -> bool:
    # The server's parser refuses a Content-Length that is not a number before this runs; refused here too.
    length = request.headers.get("content-length")
    return length is not None and not (length.isdigit() and int(length) <= MAX_BODY_BYTES)


async def _bounded_body(request: Request) -> bytes | None:
    """The body, read as it comes; None as soon as it is over `MAX_BODY_BYTES`."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None
    return bytes(body)


async def _session(request: Request) -> Response:
    from starlette.responses import Response

    if _declared_too_large(request):
        return _too_large()
    client = request.client.host if request.client else ""
    if wait := _THROTTLE.admit(client):
        return Response(status_code=429, headers={"Retry-After": str(wait)})
    body = await _bounded_body(request)
    if body is None:
        return _too_large()
    try:
        redeemed = await asyncio.to_thread(_redeem, body.decode("ascii", "replace").strip())  # off the event loop
    except DBAPIError:
        _THROTTLE.hand_back(client)  # not the code's fault
        return Response(status_code=503)  # the database is down or busy: the page's sign-in stays, the cookie not
    if redeemed is None or not auth.is_token(redeemed[0]):
        return Response(status_code=403)
    _THROTTLE.hand_back(client)
    response = Response(status_code=204)
    response.set_cookie(COOKIE, redeemed[0], max_age=redeemed[1], path="/", httponly=True, samesite="strict",
                        secure=_secure(request))
    return response


async def _sign_out(request: Request) -> Response:
    from starlette.responses import Response

    if _declared_too_large(request) or await _bounded_body(request) is None:
        return _too_large()
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=_secure(request))
    return response


def routes() -> list[object]:
    """The two routes `server.py` mounts (POST only: a link cannot trigger them)."""
    from starlette.routing import Route

    return [Route(SESSION_PATH, _session, methods=["POST"]), Route(SIGN_OUT_PATH, _sign_out, methods=["POST"])]
