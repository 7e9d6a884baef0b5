"""`python -m annotator user ...` as an admin runs it: `add --oidc EMAIL --role ROLE` (an account that signs in
through the identity provider with the role set here, and no password), `unlock NAME`."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from annotator.accounts import auth, throttle
from annotator.database.engine import read_session
from annotator.database.models import utcnow
from tests.support.candidates import add_user
from tests.support.cli import run_cli


def test_user_add_oidc_makes_an_account_the_provider_signs_in(sqlite_url: str, sqlite_engine: Engine) -> None:
    added = run_cli(sqlite_url, "user", "add", "--oidc", "Ada@Example.com", "--role", "reviewer")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "added ada@example.com (reviewer)"
    subject = run_cli(sqlite_url, "user", "add", "bea", "--oidc-subject", "248289761001", "--role", "admin")
    assert subject.returncode == 0, subject.stderr
    listed = run_cli(sqlite_url, "user", "list")
    assert listed.stdout.splitlines() == ["ada@example.com\treviewer\tactive\tada@example.com",
                                          "bea\tadmin\tactive\t248289761001"]
    user, _token = auth.sign_in_identity(sqlite_engine, claims={"sub": "x", "email": "ADA@example.com"})
    assert (user.name, user.role) == ("ada@example.com", "reviewer")
    with read_session(sqlite_engine) as session:
        assert auth.authenticate(session, name="ada@example.com", password="") is None

    again = run_cli(sqlite_url, "user", "add", "other", "--oidc", "ADA@example.com")
    assert again.returncode == 1
    assert again.stderr.strip().endswith("'ada@example.com' already signs in as 'ada@example.com'")
    assert "Traceback" not in again.stderr
    bad = run_cli(sqlite_url, "user", "add", "--oidc", "not-an-address")
    assert bad.returncode == 1 and "not an e-mail address: 'not-an-address'" in bad.stderr
    nothing = run_cli(sqlite_url, "user", "add")
    assert nothing.returncode == 2 and "give the account's NAME" in nothing.stderr


def test_user_unlock_forgets_the_failed_sign_ins_that_hold_up_new_addresses(database_url: str, engine: Engine) -> None:
    password = "ann's long enough password"
    add_user(engine, "ann", password=password)
    start = utcnow()
    for i in range(throttle.ACCOUNT_FREE_FAILURES):  # strangers, each from an address of their own
        assert auth.sign_in(engine, name="ann", password="a guess", client=f"203.0.113.{i + 1}", now=start) is None
    with pytest.raises(throttle.Throttled):
        auth.sign_in(engine, name="ann", password=password, client="192.0.2.50", now=start)

    unlocked = run_cli(database_url, "user", "unlock", "ann")
    assert unlocked.returncode == 0, unlocked.stderr
    assert unlocked.stdout.splitlines() == ["unlocked ann"]
    assert auth.sign_in(engine, name="ann", password=password, client="192.0.2.50", now=start) is not None

    unknown = run_cli(database_url, "user", "unlock", "nobody")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == ["error: no account called 'nobody'"], unknown.stderr


def test_user_add_refuses_a_name_with_a_bidirectional_override_in_one_line(sqlite_url: str) -> None:
    added = run_cli(sqlite_url, "user", "add", "ann\u202eeve", "--oidc-subject", "248289761002")
    assert added.returncode == 1 and "Traceback" not in added.stderr
    [line] = added.stderr.strip().splitlines()
    assert line.endswith("the name 'ann\\u202eeve' holds U+202E RIGHT-TO-LEFT OVERRIDE at character 4: names may "
                         "not hold control, format or bidirectional characters")
    assert "\u202e" not in added.stderr  # the message shows the character as its escape, not the character
