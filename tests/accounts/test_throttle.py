"""The sign-in throttle as a stranger and the account's owner meet it (`annotator.accounts.throttle`), on SQLite and
PostgreSQL, with explicit times."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, select

from annotator.accounts import auth, throttle
from annotator.database.engine import read_session, write_session
from annotator.database.models import SignInFailure, utcnow
from tests.support.candidates import add_user

PW = "the owner's long password"
OWNER_ADDRESS = "198.51.100.7"
START = datetime(2030, 1, 6, 9, 0, tzinfo=utcnow().tzinfo)


def _sign_in_fails(engine: Engine, *, client: str, now: datetime) -> None:
    """A wrong password for "ann" through `auth.sign_in` (Argon2 and all)."""
    assert auth.sign_in(engine, name="ann", password="a wrong guess", client=client, now=now) is None


def _counted_failure(engine: Engine, *, client: str, now: datetime) -> None:
    """What `auth.sign_in` does with a wrong password for "ann", without Argon2's time: the throttle's check, then
    the failure counted."""
    with read_session(engine) as session:
        throttle.check(session, name="ann", client=client, now=now)
    with write_session(engine) as session:
        throttle.record_failure(session, attempt_keys=throttle.keys(name="ann", client=client), now=now)


Guess = Callable[..., None]


def _attack(engine: Engine, *, address: Callable[[int], str], guesses: int, at: datetime,
            guess: Guess = _counted_failure) -> datetime:
    """A stranger makes `guesses` wrong guesses at "ann", each the moment the wait before it ends (guess `i` from
    `address(i)`); the time of the last one."""
    made = 0
    while made < guesses:
        try:
            guess(engine, client=address(made), now=at)
        except throttle.Throttled as waiting:
            at += waiting.wait  # to the moment the wait ends, and guess then
            continue
        made += 1
    return at


def _owner_signs_in(engine: Engine, *, at: datetime, client: str = OWNER_ADDRESS) -> bool:
    return auth.sign_in(engine, name="ann", password=PW, client=client, now=at) is not None


@pytest.mark.parametrize("address", [lambda i: "203.0.113.9", lambda i: f"203.0.{i // 250}.{i % 250 + 1}"],
                         ids=["one address", "an address per guess"])
def test_a_stranger_guessing_whenever_the_wait_ends_never_holds_up_the_owner(
    engine: Engine, address: Callable[[int], str]
) -> None:
    add_user(engine, "ann", password=PW)
    assert _owner_signs_in(engine, at=START)  # the owner's usual address is known to the account
    guesses = throttle.ACCOUNT_FREE_FAILURES + 6  # past every row's free failures, whatever the addresses
    last = _attack(engine, address=address, guesses=guesses, at=START + timedelta(minutes=1), guess=_sign_in_fails)
    # The stranger waits, however many addresses they guess from...
    with pytest.raises(throttle.Throttled) as waiting:
        _sign_in_fails(engine, client=address(guesses), now=last + timedelta(seconds=30))
    assert waiting.value.wait >= throttle.delay(6, throttle.ACCOUNT_FREE_FAILURES) - timedelta(seconds=30)
    # ...while the owner, within a minute of the stranger's last try, signs in from their usual address.
    assert _owner_signs_in(engine, at=last + timedelta(seconds=30))


def test_a_stranger_from_many_addresses_gets_few_guesses_a_day(engine: Engine) -> None:
    add_user(engine, "ann", password=PW)
    day = START + timedelta(days=1)
    at, made = START, 0
    while at < day:
        try:
            _counted_failure(engine, client=f"10.{made // 250}.{made % 250}.1", now=at)
            made, last = made + 1, at
        except throttle.Throttled as waiting:
            at += waiting.wait
    # The free ones, the doubling waits up to MAX_DELAY, then one per MAX_DELAY.
    assert made <= throttle.ACCOUNT_FREE_FAILURES + 10 + timedelta(days=1) / throttle.MAX_DELAY
    # A new address is held up too: it is not known to the account.
    with pytest.raises(throttle.Throttled):
        _owner_signs_in(engine, at=last + timedelta(minutes=1), client="192.0.2.50")


def test_the_owner_waits_for_their_own_typos_and_only_from_that_address(engine: Engine) -> None:
    add_user(engine, "ann", password=PW)
    assert _owner_signs_in(engine, at=START)
    for i in range(throttle.FREE_FAILURES):
        assert auth.sign_in(engine, name="Ann ", password=f"typo {i}", client=OWNER_ADDRESS, now=START) is None
    with pytest.raises(throttle.Throttled, match="try again in 2 seconds"):
        _owner_signs_in(engine, at=START)
    assert _owner_signs_in(engine, at=START, client="192.0.2.50")  # a few failures do not hold the account
    assert _owner_signs_in(engine, at=START + throttle.FIRST_DELAY)
    with read_session(engine) as session:
        kept = set(session.execute(select(SignInFailure.key)).scalars())
    # The success forgot the account's failures from that address; the address's own count stays (an insider's
    # sign-ins to their own account must not clear their guesses at others').
    assert kept == {f"client:{OWNER_ADDRESS}", f"known:ann:{OWNER_ADDRESS}", "known:ann:192.0.2.50"}


def test_a_known_address_is_forgotten_when_unused(engine: Engine) -> None:
    add_user(engine, "ann", password=PW)
    assert _owner_signs_in(engine, at=START)
    later = START + throttle.KNOWN_FOR + timedelta(days=1)
    last = _attack(engine, address=lambda i: f"203.0.113.{i + 1}", guesses=throttle.ACCOUNT_FREE_FAILURES + 1,
                   at=later)
    with pytest.raises(throttle.Throttled):
        _owner_signs_in(engine, at=last)


def _locked_out_from_new_addresses(engine: Engine) -> datetime:
    """Strangers from many addresses have made every new address wait; the time of their last guess."""
    add_user(engine, "ann", password=PW)
    last = _attack(engine, address=lambda i: f"203.0.113.{i + 1}", guesses=throttle.ACCOUNT_FREE_FAILURES + 5,
                   at=START)
    with pytest.raises(throttle.Throttled):
        _owner_signs_in(engine, at=last, client="192.0.2.50")
    return last


@pytest.mark.parametrize("clear", [
    lambda session: auth.unlock(session, name="ann"),
    lambda session: auth.set_active(session, name="ann", active=True),
    lambda session: auth.set_password(session, name="ann", password=PW),
], ids=["unlock", "enable", "password"])
def test_unlock_enable_and_a_new_password_forget_the_accounts_failures(
    engine: Engine, clear: Callable[..., None]
) -> None:
    last = _locked_out_from_new_addresses(engine)
    with read_session(engine) as session:
        assert list(throttle.locked_accounts(session, now=last)) == ["ann"]
    with write_session(engine) as session:
        clear(session)
    with read_session(engine) as session:
        assert throttle.locked_accounts(session, now=last) == {}
    assert _owner_signs_in(engine, at=last, client="192.0.2.50")


def test_a_new_password_forgets_the_addresses_the_old_one_made_known(engine: Engine) -> None:
    add_user(engine, "ann", password=PW)
    assert _owner_signs_in(engine, at=START)
    with write_session(engine) as session:
        auth.set_password(session, name="ann", password=PW)
    last = _attack(engine, address=lambda i: f"203.0.113.{i + 1}", guesses=throttle.ACCOUNT_FREE_FAILURES + 1,
                   at=START)
    with pytest.raises(throttle.Throttled):
        _owner_signs_in(engine, at=last)


def test_locked_accounts_names_each_account_with_its_longest_wait(engine: Engine) -> None:
    add_user(engine, "Ann", password=PW)
    add_user(engine, "bea", password=PW)
    for i in range(throttle.FREE_FAILURES):  # an IPv6 address: its ":" must not be read as the name's end
        assert auth.sign_in(engine, name="ann", password=f"x {i}", client="2001:db8::5", now=START) is None
    later = START + throttle.FIRST_DELAY
    assert auth.sign_in(engine, name="ann", password="x", client="2001:db8::5", now=later) is None
    for i in range(throttle.FREE_FAILURES - 1):  # below the ceiling: bea waits for nothing
        assert auth.sign_in(engine, name="bea", password=f"x {i}", client="2001:db8::6", now=START) is None
    with read_session(engine) as session:
        assert throttle.locked_accounts(session, now=later) == {"Ann": throttle.delay(throttle.FREE_FAILURES + 1)}
        assert throttle.locked_accounts(session, now=START + timedelta(minutes=1)) == {"Ann": timedelta(0)}
        assert throttle.locked_accounts(session, now=later + throttle.FORGET_AFTER) == {}
    with write_session(engine) as session, pytest.raises(auth.AuthError, match="no account called 'nobody'"):
        auth.unlock(session, name="nobody")


def test_a_name_with_a_colon_cannot_stand_for_an_account_at_another_address() -> None:
    # "ann" from 2001:db8::5 and "ann:2001" from db8::5 would both read "pair:ann:2001:db8::5".
    assert throttle.attempt(name="ann:2001", client="db8::5").pair is None
    assert throttle.attempt(name="ann", client="2001:db8::5").pair == "pair:ann:2001:db8::5"
    assert throttle.keys(name=" Ann", client=None) == ["account:ann", "client:local", "pair:ann:local"]


def test_the_wait_stays_at_its_ceiling_however_many_failures() -> None:
    assert throttle.delay(throttle.FREE_FAILURES + 10**6) == throttle.MAX_DELAY
    assert throttle.delay(throttle.ACCOUNT_FREE_FAILURES - 1, throttle.ACCOUNT_FREE_FAILURES) == timedelta(0)
    assert throttle.delay(throttle.ACCOUNT_FREE_FAILURES, throttle.ACCOUNT_FREE_FAILURES) == throttle.FIRST_DELAY
