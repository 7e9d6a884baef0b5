"""The sign-in cookie's one-time codes in the database (`annotator.accounts.sign_in_codes`): issued by one app server,
redeemed by another, once, within their short life; the table holds neither the code nor the token."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import Engine, select

from annotator.accounts import auth, sign_in_codes
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import SignInCode, utcnow
from tests.support.candidates import add_user


def _token(engine: Engine) -> str:
    user = add_user(engine, "ann")
    with write_session(engine) as session:
        return auth.start_sign_in(session, user=user)


def _issue(engine: Engine, token: str, **options: object) -> str:
    return sign_in_codes.issue(engine, token=token, max_age=3600, **options)  # type: ignore[arg-type]


def _redeem(engine: Engine, code: str, **options: object) -> tuple[str, int] | None:
    return sign_in_codes.redeem(engine, code=code, **options)  # type: ignore[arg-type]


def test_a_code_issued_by_one_server_is_redeemed_by_another_once(engine: Engine, database_url: str) -> None:
    token = _token(engine)
    code = _issue(engine, token)
    # Another app server: a second engine (its own connections) on the same database.
    other = get_engine.__wrapped__(database_url)
    assert other is not engine
    assert _redeem(other, code) == (token, 3600)
    assert _redeem(other, code) is None and _redeem(engine, code) is None  # spent everywhere


def test_the_table_holds_neither_the_code_nor_the_token(engine: Engine) -> None:
    token = _token(engine)
    code = _issue(engine, token)
    with read_session(engine) as session:
        [row] = session.execute(select(SignInCode)).scalars().all()
    stored = " ".join(str(value) for value in row.model_dump().values())
    assert code not in stored and token not in stored
    assert len(row.code_hash) == 64 and len(row.sealed_token) == 64


def test_an_expired_unknown_or_malformed_code_gives_nothing_and_expired_ones_are_dropped(engine: Engine) -> None:
    token = _token(engine)
    old = _issue(engine, token, now=utcnow() - timedelta(seconds=sign_in_codes.HANDOFF_SECONDS + 1))
    assert _redeem(engine, old) is None
    assert _redeem(engine, "x" * 43) is None  # the shape of a code, never issued
    assert _redeem(engine, "") is None and _redeem(engine, "a'; DROP TABLE signincode; --") is None
    expired = _issue(engine, token, now=utcnow() - timedelta(seconds=sign_in_codes.HANDOFF_SECONDS + 1))
    fresh = _issue(engine, token)  # issuing drops the expired ones
    with read_session(engine) as session:
        assert session.execute(select(SignInCode.code_hash)).scalars().all() == [sign_in_codes._lookup(fresh)]
    assert _redeem(engine, expired) is None and _redeem(engine, fresh) == (token, 3600)


def test_only_a_sign_in_token_is_handed_over(engine: Engine) -> None:
    with pytest.raises(ValueError, match="not a sign-in token"):
        sign_in_codes.issue(engine, token="not-a-token", max_age=60)
    with read_session(engine) as session:
        assert session.execute(select(SignInCode)).first() is None


def test_two_servers_redeeming_one_code_at_once_get_it_once(engine: Engine) -> None:
    token = _token(engine)
    codes = [_issue(engine, token) for _ in range(20)]
    results: list[tuple[str, int] | None] = []
    start = threading.Barrier(2)

    def redeem_all() -> None:
        start.wait()
        for code in codes:
            results.append(_redeem(engine, code))

    threads = [threading.Thread(target=redeem_all) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results, key=str) == sorted([(token, 3600)] * 20 + [None] * 20, key=str)
