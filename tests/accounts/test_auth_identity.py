"""Signing in through an identity provider (OpenID Connect): the provider's claims -> the account an admin gave
that e-mail address or subject; an unknown identity creates nothing; a disabled account is refused; the sign-in
lasts as long as a password's, counted from the provider's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, func, select

from annotator.accounts import auth
from annotator.database.engine import read_session, write_session
from annotator.database.models import Annotator, utcnow

PW = "a long enough password"


def _add(engine: Engine, name: str, **identity: str) -> auth.User:
    with write_session(engine) as session:
        return auth.create_user(session, name=name, role=identity.pop("role", "annotator"), **identity)


def _count(engine: Engine) -> int:
    with read_session(engine) as session:
        return session.execute(select(func.count()).select_from(Annotator)).scalar_one()


def test_the_email_maps_to_its_account_whatever_its_case_and_the_token_signs_in(engine: Engine) -> None:
    alice = _add(engine, "alice", oidc_email="Alice@Example.COM", role="reviewer")
    user, token = auth.sign_in_identity(engine, claims={"sub": "u-1", "email": "ALICE@example.com"})
    assert user == alice and user.role == "reviewer"
    with read_session(engine) as session:
        found = auth.user_for_token(session, token=token)
        assert found is not None and found[0] == alice
        # Kept lower-case; no password: the password form cannot sign this account in.
        row = session.execute(select(Annotator).where(Annotator.name == "alice")).scalar_one()
        assert (row.oidc_email, row.password_hash) == ("alice@example.com", None)
        assert auth.authenticate(session, name="alice", password="") is None
        assert auth.has_accounts(session)


def test_the_subject_maps_exactly_and_wins_over_the_email(engine: Engine) -> None:
    by_subject = _add(engine, "sub-person", oidc_subject="Abc123")
    _add(engine, "mail-person", oidc_email="shared@example.com")
    user, _token = auth.sign_in_identity(engine, claims={"sub": "Abc123", "email": "shared@example.com"})
    assert user == by_subject
    with pytest.raises(auth.IdentityRefused) as refused:
        auth.sign_in_identity(engine, claims={"sub": "abc123"})  # a subject is compared exactly
    assert refused.value.reason == "unknown" and refused.value.identity == "abc123"


def test_an_unknown_identity_is_told_to_ask_an_admin_and_gets_no_account(engine: Engine) -> None:
    _add(engine, "alice", oidc_email="alice@example.com")
    before = _count(engine)
    with pytest.raises(auth.IdentityRefused, match="ask an admin to add mallory@example.com") as refused:
        auth.sign_in_identity(engine, claims={"sub": "m", "email": "mallory@example.com"})
    assert refused.value.reason == "unknown"
    assert _count(engine) == before


def test_an_email_the_provider_says_is_unverified_does_not_sign_in(engine: Engine) -> None:
    _add(engine, "alice", oidc_email="alice@example.com")
    with pytest.raises(auth.IdentityRefused) as refused:
        auth.sign_in_identity(engine, claims={"sub": "x", "email": "alice@example.com", "email_verified": False})
    assert refused.value.reason == "unknown" and refused.value.identity == "x"
    user, _token = auth.sign_in_identity(
        engine, claims={"sub": "x", "email": "alice@example.com", "email_verified": True}
    )
    assert user.name == "alice"


def test_a_disabled_account_is_refused_and_disabling_ends_its_sign_in(engine: Engine) -> None:
    _add(engine, "alice", oidc_email="alice@example.com")
    _user, token = auth.sign_in_identity(engine, claims={"email": "alice@example.com"})
    with write_session(engine) as session:
        auth.set_active(session, name="alice", active=False)
    with read_session(engine) as session:
        assert auth.user_for_token(session, token=token) is None
    with pytest.raises(auth.IdentityRefused, match="disabled") as refused:
        auth.sign_in_identity(engine, claims={"email": "alice@example.com"})
    assert refused.value.reason == "disabled"


def test_the_sign_in_ends_a_lifetime_after_the_providers(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANNOTATOR_SESSION_HOURS", "12")
    _add(engine, "alice", oidc_email="alice@example.com")
    now = utcnow()
    issued = int((now - timedelta(hours=11)).timestamp())
    _user, token = auth.sign_in_identity(engine, claims={"email": "alice@example.com", "iat": issued}, now=now)
    with read_session(engine) as session:
        found = auth.user_for_token(session, token=token)
        assert found is not None
        assert abs(found[1] - (now + timedelta(hours=1))) < timedelta(seconds=5)
    stale = int((now - timedelta(hours=13)).timestamp())
    with pytest.raises(auth.IdentityRefused, match="sign in again") as refused:
        auth.sign_in_identity(engine, claims={"email": "alice@example.com", "iat": stale}, now=now)
    assert refused.value.reason == "expired"


def test_bad_identities_are_refused(engine: Engine) -> None:
    _add(engine, "alice", oidc_email="alice@example.com", oidc_subject="s-1")
    with write_session(engine) as session:
        with pytest.raises(auth.AuthError, match="'alice' already signs in as 'alice@example.com'"):
            auth.create_user(session, name="bob", role="annotator", oidc_email=" ALICE@example.com ")
        with pytest.raises(auth.AuthError, match="'alice' already signs in as 's-1'"):
            auth.create_user(session, name="bob", role="annotator", oidc_subject="s-1")
        with pytest.raises(auth.AuthError, match="not an e-mail address"):
            auth.create_user(session, name="bob", role="annotator", oidc_email="bob")
        with pytest.raises(auth.AuthError, match="needs a password or an identity"):
            auth.create_user(session, name="bob", role="annotator")
        both = auth.create_user(session, name="carol", role="admin", password=PW, oidc_email="carol@example.com")
        assert auth.authenticate(session, name="carol", password=PW) == both
