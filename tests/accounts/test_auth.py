from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.accounts import auth, throttle
from annotator.accounts.auth import system_annotator_id
from annotator.accounts.policies import Capability
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotator, SignInFailure, SignInSession, utcnow
from tests.support.cli import run_cli

PW = "a long enough password"


def test_password_is_stored_as_argon2_hash_and_checked(engine: Engine) -> None:
    with write_session(engine) as session:
        user = auth.create_user(session, name="ann", role="annotator", password="s3cret-passphrase")
    with read_session(engine) as session:
        stored = session.execute(select(Annotator.password_hash).where(Annotator.id == user.id)).scalar_one()
        assert stored.startswith("$argon2id$") and "s3cret-passphrase" not in stored
        assert auth.authenticate(session, name="ann", password="s3cret-passphrase") == user
        assert auth.authenticate(session, name="ann", password="S3CRET-PASSPHRASE") is None
        assert auth.authenticate(session, name="nobody", password="s3cret-passphrase") is None


def test_bad_accounts_are_refused(engine: Engine) -> None:
    with write_session(engine) as session:
        auth.create_user(session, name="ann", role="annotator", password=PW)
        with pytest.raises(auth.AuthError, match="already exists"):
            auth.create_user(session, name="ann", role="reviewer", password=PW)
        with pytest.raises(auth.AuthError, match="unknown role"):
            auth.create_user(session, name="bob", role="boss", password=PW)
        with pytest.raises(auth.AuthError, match="at least 12 characters"):
            auth.create_user(session, name="bob", role="annotator", password="")
        with pytest.raises(auth.AuthError, match="reserved"):
            auth.create_user(session, name="import:x", role="annotator", password=PW)
        # A name is a name on SQLite as on PostgreSQL (which refuses NUL): no control or bidirectional character.
        refused = (("bo\x00b", r"U\+0000 \(a control character\)"), ("admin\u202e", r"U\+202E RIGHT-TO-LEFT OVERRIDE"))
        for name, char in refused:
            with pytest.raises(auth.AuthError, match=rf"^the name '.*' holds {char} at character"):
                auth.create_user(session, name=name, role="annotator", password=PW)
        assert auth.create_user(session, name="Zoë Ødegård", role="annotator", password=PW).name == "Zoë Ødegård"


def test_system_annotators_cannot_sign_in_and_do_not_count_as_accounts(engine: Engine) -> None:
    with write_session(engine) as session:
        system_annotator_id(session, name="import:reliablemath")
    with read_session(engine) as session:
        assert not auth.has_accounts(session)
        assert auth.authenticate(session, name="import:reliablemath", password="") is None


def test_first_admin_only_once(engine: Engine) -> None:
    with write_session(engine) as session:
        admin = auth.create_first_admin(session, name="root", password=PW)
    assert admin.role == "admin"
    with pytest.raises(auth.AuthError, match="already exists"), write_session(engine) as session:
        auth.create_first_admin(session, name="second", password=PW)


def test_session_token_signs_in_until_it_expires_or_the_account_is_disabled(engine: Engine) -> None:
    with write_session(engine) as session:
        user = auth.create_user(session, name="ann", role="reviewer", password=PW)
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
        assert auth.authenticate(session, name="ann", password=PW) is None


def test_sign_out_ends_the_session(engine: Engine) -> None:
    with write_session(engine) as session:
        user = auth.create_user(session, name="ann", role="annotator", password=PW)
        token = auth.start_sign_in(session, user=user)
        auth.end_sign_in(session, token=token)
    with read_session(engine) as session:
        assert auth.user_for_token(session, token=token) is None


def test_allows_asks_the_policies() -> None:
    reviewer = auth.User(id=1, name="rev", role="reviewer")
    assert auth.allows(reviewer, Capability.adjudicate)
    assert not auth.allows(reviewer, Capability.administer)
    assert not auth.allows(None, Capability.annotate)


def test_a_write_is_checked_against_the_capability_in_its_transaction(engine: Engine) -> None:
    with write_session(engine) as session:
        rev = auth.create_user(session, name="rev", role="reviewer", password=PW)
    with write_session(engine) as session:
        auth.check_writer(session, user_id=rev.id, capability=Capability.review)
        with pytest.raises(auth.AccountDisabled, match="role is now reviewer"):
            auth.check_writer(session, user_id=rev.id, capability=Capability.administer)
        auth.set_active(session, name="rev", active=False)
        with pytest.raises(auth.AccountDisabled, match="disabled"):
            auth.check_writer(session, user_id=rev.id, capability=Capability.annotate)


def test_user_commands(sqlite_url: str, sqlite_engine: Engine) -> None:
    added = run_cli(
        sqlite_url, "user", "add", "alice", "--role", "reviewer", "--password-stdin", stdin="pa ss long enough\n"
    )
    assert added.returncode == 0, added.stderr
    assert "added alice (reviewer)" in added.stdout
    with read_session(sqlite_engine) as session:
        assert auth.authenticate(session, name="alice", password="pa ss long enough") is not None
    duplicate = run_cli(sqlite_url, "user", "add", "alice", "--password-stdin", stdin="another long one\n")
    assert duplicate.returncode == 1 and "already exists" in duplicate.stderr
    bad_role = run_cli(sqlite_url, "user", "add", "bob", "--role", "boss", "--password-stdin",
                       stdin="another long one\n")
    assert bad_role.returncode == 2 and "unknown role" in bad_role.stderr
    assert run_cli(sqlite_url, "user", "disable", "alice").returncode == 0
    listed = run_cli(sqlite_url, "user", "list")
    assert listed.stdout.splitlines() == ["alice\treviewer\tdisabled"]
    with read_session(sqlite_engine) as session:
        assert auth.authenticate(session, name="alice", password="pa ss long enough") is None
    unknown = run_cli(sqlite_url, "user", "disable", "nobody")
    assert unknown.returncode == 1 and "no account called 'nobody'" in unknown.stderr


def test_sign_in_verifies_the_password_without_the_write_lock(
    tmp_path: Path, set_environment: Callable[..., None]
) -> None:
    """Sixteen people signing in at once must not queue their (slow on purpose) Argon2 checks behind SQLite's
    one write lock: a wrong password is refused while another connection holds that lock, and a right one
    takes it only to record the sign-in."""
    db = tmp_path / "lock.sqlite"
    engine = get_engine(f"sqlite:///{db}")
    with write_session(engine) as session:
        auth.create_user(session, name="ann", role="annotator", password="s3cret-passphrase")
    holder = sqlite3.connect(db, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    set_environment(ANNOTATOR_PAGE_BUSY_SECONDS="0.2")  # how long a failure's count waits for the lock
    try:
        assert auth.sign_in(engine, name="ann", password="wrong") is None
        assert auth.sign_in(engine, name="nobody", password="s3cret-passphrase") is None
    finally:
        holder.rollback()
        holder.close()
    signed_in = auth.sign_in(engine, name="ann", password="s3cret-passphrase")
    assert signed_in is not None
    user, token = signed_in
    with read_session(engine) as session:
        found = auth.user_for_token(session, token=token)
    assert found is not None and found[0] == user


WEAK = [
    ("short one", "at least 12 characters"),
    ("Password1234", "common passwords"),
    ("QWERTYUIOP123", "common passwords"),
    ("aaaaaaaaaaaaaaaa", "one character repeated"),
    ("my name is annabelle!", "account's name"),
]


@pytest.mark.parametrize(("password", "reason"), WEAK)
def test_weak_passwords_are_refused_for_new_accounts_first_admins_and_changes(
    engine: Engine, password: str, reason: str
) -> None:
    with pytest.raises(auth.AuthError, match=reason), write_session(engine) as session:
        auth.create_first_admin(session, name="annabelle", password=password)
    with pytest.raises(auth.AuthError, match=reason), write_session(engine) as session:
        auth.create_user(session, name="annabelle", role="annotator", password=password)
    with read_session(engine) as session:
        assert not auth.has_accounts(session)
    with write_session(engine) as session:
        auth.create_user(session, name="annabelle", role="annotator", password=PW)
    with pytest.raises(auth.AuthError, match=reason), write_session(engine) as session:
        auth.set_password(session, name="annabelle", password=password)
    with read_session(engine) as session:
        assert auth.authenticate(session, name="annabelle", password=PW) is not None
        assert str(password) not in str(session.execute(select(Annotator.password_hash)).scalars().all())


def test_cli_refuses_weak_passwords_in_one_line(sqlite_url: str, sqlite_engine: Engine) -> None:
    short = run_cli(sqlite_url, "user", "add", "alice", "--password-stdin", stdin="short\n")
    assert short.returncode == 1 and short.stderr.strip().endswith("at least 12 characters (it has 5)"), short.stderr
    assert "Traceback" not in short.stderr
    with read_session(sqlite_engine) as session:
        assert not auth.has_accounts(session)
    assert run_cli(sqlite_url, "user", "add", "alice", "--password-stdin", stdin=f"{PW}\n").returncode == 0
    common = run_cli(sqlite_url, "user", "password", "alice", "--password-stdin", stdin="password1234\n")
    assert common.returncode == 1 and len(common.stderr.strip().splitlines()) == 1, common.stderr
    assert "common passwords" in common.stderr
    with read_session(sqlite_engine) as session:
        assert auth.authenticate(session, name="alice", password=PW) is not None
        assert auth.authenticate(session, name="alice", password="password1234") is None


def test_sign_ins_of_an_account_from_one_client_are_throttled_after_five_failures(engine: Engine) -> None:
    with write_session(engine) as session:
        auth.create_user(session, name="ann", role="annotator", password=PW)
    start = utcnow()
    for i in range(throttle.FREE_FAILURES):
        assert auth.sign_in(engine, name="ann", password=f"wrong {i}", client="10.0.0.5", now=start) is None
    # Now even the right password is not checked from this client until the delay has passed.
    with pytest.raises(throttle.Throttled, match="try again in 2 seconds"):
        auth.sign_in(engine, name="Ann ", password=PW, client="10.0.0.5", now=start)
    later = start + timedelta(seconds=3)
    assert auth.sign_in(engine, name="ann", password="wrong again", client="10.0.0.5", now=later) is None
    # Each further failure doubles the wait.
    with pytest.raises(throttle.Throttled) as caught:
        auth.sign_in(engine, name="ann", password=PW, client="10.0.0.5", now=later + timedelta(seconds=3))
    assert caught.value.wait == timedelta(seconds=1)
    with read_session(engine) as session:
        row = session.get(SignInFailure, "pair:ann:10.0.0.5")
        assert row is not None and row.failures == throttle.FREE_FAILURES + 1
    signed_in = auth.sign_in(engine, name="ann", password=PW, client="10.0.0.5", now=later + timedelta(seconds=5))
    assert signed_in is not None
    with read_session(engine) as session:
        assert session.get(SignInFailure, "pair:ann:10.0.0.5") is None  # a success starts the count again
        assert session.get(SignInFailure, "account:ann") is None


def test_sign_ins_are_throttled_per_client_across_accounts(engine: Engine) -> None:
    with write_session(engine) as session:
        auth.create_user(session, name="ann", role="annotator", password=PW)
    start = utcnow()
    for i in range(throttle.CLIENT_FREE_FAILURES):  # one guess at each of many names, from one address
        assert auth.sign_in(engine, name=f"user{i}", password="guess guess guess", client="10.0.0.7", now=start) is None
    with pytest.raises(throttle.Throttled):
        auth.sign_in(engine, name="ann", password=PW, client="10.0.0.7", now=start)
    assert auth.sign_in(engine, name="ann", password=PW, client="10.0.0.8", now=start) is not None
    # An hour after its last failure a client starts afresh.
    assert auth.sign_in(engine, name="ann", password=PW, client="10.0.0.7", now=start + timedelta(hours=1)) is not None


def test_delay_grows_to_a_ceiling() -> None:
    delays = [throttle.delay(n) for n in range(12)]
    assert delays[: throttle.FREE_FAILURES] == [timedelta(0)] * throttle.FREE_FAILURES
    assert delays[5:8] == [timedelta(seconds=2), timedelta(seconds=4), timedelta(seconds=8)]
    assert throttle.delay(40) == throttle.MAX_DELAY


def test_a_short_name_may_appear_in_a_password(engine: Engine) -> None:
    with write_session(engine) as session:
        auth.create_user(session, name="al", role="annotator", password="always a long passphrase")
        with pytest.raises(auth.AuthError, match="account's name"):
            auth.create_user(session, name="alwa", role="annotator", password="always a long passphrase")
