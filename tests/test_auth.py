from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator import auth
from annotator.auth import system_annotator_id
from annotator.db import get_engine, read_session, write_session
from annotator.models import Annotator, SignInSession, utcnow
from tests.conftest import PROJECT_ROOT


def test_password_is_stored_as_argon2_hash_and_checked(engine: Engine) -> None:
    with write_session(engine) as session:
        user = auth.create_user(session, name="ann", role="annotator", password="s3cret")
    with read_session(engine) as session:
        stored = session.execute(select(Annotator.password_hash).where(Annotator.id == user.id)).scalar_one()
        assert stored.startswith("$argon2id$") and "s3cret" not in stored
        assert auth.authenticate(session, name="ann", password="s3cret") == user
        assert auth.authenticate(session, name="ann", password="S3cret") is None
        assert auth.authenticate(session, name="nobody", password="s3cret") is None


def test_bad_accounts_are_refused(engine: Engine) -> None:
    with write_session(engine) as session:
        auth.create_user(session, name="ann", role="annotator", password="x")
        with pytest.raises(auth.AuthError, match="already exists"):
            auth.create_user(session, name="ann", role="reviewer", password="y")
        with pytest.raises(auth.AuthError, match="unknown role"):
            auth.create_user(session, name="bob", role="boss", password="y")
        with pytest.raises(auth.AuthError, match="empty"):
            auth.create_user(session, name="bob", role="annotator", password="")
        with pytest.raises(auth.AuthError, match="reserved"):
            auth.create_user(session, name="import:x", role="annotator", password="y")


def test_system_annotators_cannot_sign_in_and_do_not_count_as_accounts(engine: Engine) -> None:
    with write_session(engine) as session:
        system_annotator_id(session, name="import:reliablemath")
    with read_session(engine) as session:
        assert not auth.has_accounts(session)
        assert auth.authenticate(session, name="import:reliablemath", password="") is None


def test_first_admin_only_once(engine: Engine) -> None:
    with write_session(engine) as session:
        admin = auth.create_first_admin(session, name="root", password="pw")
    assert admin.role == "admin"
    with pytest.raises(auth.AuthError, match="already exists"), write_session(engine) as session:
        auth.create_first_admin(session, name="second", password="pw")


def test_session_token_signs_in_until_it_expires_or_the_account_is_disabled(engine: Engine) -> None:
    with write_session(engine) as session:
        user = auth.create_user(session, name="ann", role="reviewer", password="pw")
        token = auth.start_sign_in(session, user=user, lifetime=timedelta(hours=1))
    with read_session(engine) as session:
        stored = session.execute(select(SignInSession.token_hash)).scalar_one()
        assert token not in stored  # only the hash is kept
        found = auth.user_for_token(session, token=token)
        assert found is not None and found[0] == user
        assert auth.user_for_token(session, token=token, now=utcnow() + timedelta(hours=2)) is None
        assert auth.user_for_token(session, token="0" * 64) is None
        assert auth.user_for_token(session, token="not a token") is None
    with write_session(engine) as session:
        auth.set_active(session, name="ann", active=False)
    with read_session(engine) as session:
        assert auth.user_for_token(session, token=token) is None
        assert auth.authenticate(session, name="ann", password="pw") is None


def test_sign_out_ends_the_session(engine: Engine) -> None:
    with write_session(engine) as session:
        user = auth.create_user(session, name="ann", role="annotator", password="pw")
        token = auth.start_sign_in(session, user=user)
        auth.end_sign_in(session, token=token)
    with read_session(engine) as session:
        assert auth.user_for_token(session, token=token) is None


def test_require_role() -> None:
    reviewer = auth.User(id=1, name="rev", role="reviewer")
    auth.require_role(reviewer, "reviewer", "admin")
    with pytest.raises(PermissionError, match="rev is reviewer"):
        auth.require_role(reviewer, "admin")
    with pytest.raises(PermissionError, match="nobody"):
        auth.require_role(None, "annotator")


def _cli(database_url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "annotator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, "ANNOTATOR_DATABASE_URL": database_url},
        timeout=120,
    )


def test_user_commands(sqlite_url: str, sqlite_engine: Engine) -> None:
    added = _cli(sqlite_url, "user", "add", "alice", "--role", "reviewer", "--password-stdin", stdin="pa ss\n")
    assert added.returncode == 0, added.stderr
    assert "added alice (reviewer)" in added.stdout
    with read_session(sqlite_engine) as session:
        assert auth.authenticate(session, name="alice", password="pa ss") is not None
    duplicate = _cli(sqlite_url, "user", "add", "alice", "--password-stdin", stdin="x\n")
    assert duplicate.returncode == 1 and "already exists" in duplicate.stderr
    bad_role = _cli(sqlite_url, "user", "add", "bob", "--role", "boss", "--password-stdin", stdin="x\n")
    assert bad_role.returncode == 2 and "unknown role" in bad_role.stderr
    assert _cli(sqlite_url, "user", "disable", "alice").returncode == 0
    listed = _cli(sqlite_url, "user", "list")
    assert listed.stdout.splitlines() == ["alice\treviewer\tdisabled"]
    with read_session(sqlite_engine) as session:
        assert auth.authenticate(session, name="alice", password="pa ss") is None
    unknown = _cli(sqlite_url, "user", "disable", "nobody")
    assert unknown.returncode == 1 and "no account called 'nobody'" in unknown.stderr


def test_sign_in_verifies_the_password_without_the_write_lock(tmp_path: Path) -> None:
    """Sixteen people signing in at once must not queue their (slow on purpose) Argon2 checks behind SQLite's
    one write lock: a wrong password is refused while another connection holds that lock, and a right one
    takes it only to record the sign-in."""
    db = tmp_path / "lock.sqlite"
    engine = get_engine(f"sqlite:///{db}")
    with write_session(engine) as session:
        auth.create_user(session, name="ann", role="annotator", password="s3cret")
    holder = sqlite3.connect(db, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert auth.sign_in(engine, name="ann", password="wrong") is None
        assert auth.sign_in(engine, name="nobody", password="s3cret") is None
    finally:
        holder.rollback()
        holder.close()
    signed_in = auth.sign_in(engine, name="ann", password="s3cret")
    assert signed_in is not None
    user, token = signed_in
    with read_session(engine) as session:
        found = auth.user_for_token(session, token=token)
    assert found is not None and found[0] == user
