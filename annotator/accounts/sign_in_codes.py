"""One-time codes that hand a sign-in token to the browser as an HttpOnly cookie (`ui.session_cookie`).

The page that signed in holds a code, never the token, and posts it to `/_annotator/session`; the server that
answers sets the cookie. That POST is a plain HTTP request, which a proxy may send to another app server than
the one holding the page's websocket, so the codes live in the database (`signincode`), not in one process:

- the row is found by an HMAC of the code, and the token is stored XOR a second HMAC of the code (a pad as long
  as the token), so that someone who reads the table learns neither the code nor the token;
- a code expires `HANDOFF_SECONDS` after it was issued, and is deleted when redeemed (one `DELETE ...
  RETURNING`: two servers given the same code at once cannot both redeem it).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete

from annotator.accounts.auth import is_token
from annotator.database.engine import write_session
from annotator.database.models import SignInCode, utcnow

HANDOFF_SECONDS = 30.0
_CODE = re.compile(r"[A-Za-z0-9_-]{43}")  # what `secrets.token_urlsafe(32)` makes


def _derive(code: str, purpose: bytes) -> bytes:
    return hmac.new(code.encode("ascii"), purpose, hashlib.sha256).digest()


def _lookup(code: str) -> str:
    return _derive(code, b"annotator sign-in code: row").hex()


def _xor_pad(code: str, data: bytes) -> bytes:
    """`data` (32 bytes) XOR the code's pad: sealing and unsealing are the same."""
    return bytes(a ^ b for a, b in zip(data, _derive(code, b"annotator sign-in code: pad"), strict=True))


def issue(engine: Engine, *, token: str, max_age: int, now: datetime | None = None) -> str:
    """A one-time code for `token` (a token `auth.start_sign_in` made) as a cookie of `max_age` seconds; also
    drops expired codes.

    Raises:
        ValueError: `token` is not such a token.
    """
    if not is_token(token):
        raise ValueError("not a sign-in token")
    now = now or utcnow()
    code = secrets.token_urlsafe(32)
    with write_session(engine) as session:
        session.execute(delete(SignInCode).where(SignInCode.expires_at <= now))
        session.add(SignInCode(code_hash=_lookup(code), sealed_token=_xor_pad(code, bytes.fromhex(token)).hex(),
                               max_age=max_age, expires_at=now + timedelta(seconds=HANDOFF_SECONDS)))
    return code


def redeem(engine: Engine, *, code: str, now: datetime | None = None) -> tuple[str, int] | None:
    """The token and cookie lifetime `code` hands over, once; None for an unknown, spent or expired code."""
    if not _CODE.fullmatch(code):
        return None
    with write_session(engine) as session:
        row = session.execute(
            delete(SignInCode).where(SignInCode.code_hash == _lookup(code))
            .returning(SignInCode.sealed_token, SignInCode.max_age, SignInCode.expires_at)
        ).first()
    if row is None or row.expires_at <= (now or utcnow()):
        return None
    return _xor_pad(code, bytes.fromhex(row.sealed_token)).hex(), row.max_age
