"""Sign-in throttling that slows guessing without letting a stranger lock a real account.

A failed sign-in counts against three rows of `signinfailure`, each with its own number of free failures after
which every further attempt must wait, twice as long after every failure (`delay`: from `FIRST_DELAY` up to
`MAX_DELAY`):

- the account from this client ("pair:NAME:ADDRESS"): `FREE_FAILURES`. One person's typos, or one address
  guessing one account, wait here; a success from this client, and an admin's unlock, clear it.
- the client, whatever the account ("client:ADDRESS"): `CLIENT_FREE_FAILURES`. One address trying a password on
  many accounts waits here; a success does not clear it (an insider's own sign-ins would), time does.
- the account, whatever the client ("account:NAME"): `ACCOUNT_FREE_FAILURES`. Many addresses guessing one
  account wait here together, except the clients known to the account: those that signed in to it within
  `KNOWN_FOR` ("known:NAME:ADDRESS", its `last_failure_at` the latest sign-in). A success from any client (it
  knew the password) and an admin's unlock clear it.

Against a stranger: from one address they get a few guesses, then one per `MAX_DELAY`; from many addresses the
account's own row holds them all to one guess per `MAX_DELAY` between them. Either way their failures never
touch the owner's own rows: the owner, signing in from an address they used before, waits only for their own
typos, however the stranger keeps the account's row waiting. An owner at a new address during such an attack
waits with the strangers; an admin's unlock (`clear_account`: `user unlock`, the Team page) or a sign-in from a
known address or the identity provider gets them in. A new password forgets the known clients too (the old
password made them known). A stranger behind the owner's own address (one office, one address) is, to the
throttle, the owner's client: their failures there hold the owner up as the owner's own typos would.

An attempt without an address (the app's own machine) counts as the client "local". The rows are in the
database, so that every app server (and the next one after a restart) sees them; every failure row is
forgotten `FORGET_AFTER` after its last failure. A wait is refused before the password is checked: a throttled
attempt costs no Argon2 time, and tells an attacker nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, or_, select, update
from sqlmodel import Session

from annotator.database.engine import insert_ignore
from annotator.database.models import Annotator, SignInFailure, utcnow

FREE_FAILURES = 5
CLIENT_FREE_FAILURES = 20
ACCOUNT_FREE_FAILURES = 20
FIRST_DELAY = timedelta(seconds=2)
MAX_DELAY = timedelta(minutes=15)
FORGET_AFTER = timedelta(hours=1)
KNOWN_FOR = timedelta(days=30)
LOCAL = "local"
_KEY_LENGTH = 300  # signinfailure.key
_DOUBLINGS_PAST_MAX = (MAX_DELAY // FIRST_DELAY).bit_length()
_FREE = {"pair": FREE_FAILURES, "client": CLIENT_FREE_FAILURES, "account": ACCOUNT_FREE_FAILURES}


class Throttled(Exception):
    """Too many recent failures: the attempt was not checked; `wait` is how long until the next may be."""

    def __init__(self, wait: timedelta) -> None:
        seconds = max(1, round(wait.total_seconds()))
        super().__init__(f"too many failed sign-ins; try again in {seconds} second{'s' * (seconds != 1)}")
        self.wait = wait


@dataclass(frozen=True)
class Attempt:
    """The rows one sign-in attempt is throttled by. `pair` and `known` are None for a name with ":", which no
    account has (the name would run into the address)."""

    account: str
    client: str
    pair: str | None
    known: str | None

    @property
    def failure_keys(self) -> list[str]:
        return [key for key in (self.account, self.client, self.pair) if key is not None]


def _name(name: str) -> str:
    return name.strip().casefold()


def attempt(*, name: str, client: str | None) -> Attempt:
    folded, address = _name(name), client or LOCAL
    own = ":" not in folded
    return Attempt(
        account=f"account:{folded}"[:_KEY_LENGTH],
        client=f"client:{address}"[:_KEY_LENGTH],
        pair=f"pair:{folded}:{address}"[:_KEY_LENGTH] if own else None,
        known=f"known:{folded}:{address}"[:_KEY_LENGTH] if own else None,
    )


def keys(*, name: str, client: str | None) -> list[str]:
    """The rows a failed attempt counts against: the account's from this client, the client's, the account's."""
    return attempt(name=name, client=client).failure_keys


def delay(failures: int, free: int = FREE_FAILURES) -> timedelta:
    """How long after the latest failure the next attempt must wait, given the failures so far and how many are
    free."""
    if failures < free:
        return timedelta(0)
    doublings = min(failures - free, _DOUBLINGS_PAST_MAX)  # a timedelta overflows long before 2**100 seconds
    return min(FIRST_DELAY * 2**doublings, MAX_DELAY)


def check(session: Session, *, name: str, client: str | None, now: datetime | None = None) -> None:
    """Raise `Throttled` if this attempt must still wait: for its own client's failures on the account, for its
    client's, or, unless the client is known to the account, for the account's."""
    now = now or utcnow()
    found = attempt(name=name, client=client)
    rows = {key: (_aware(blocked), _aware(last)) for key, blocked, last in session.execute(
        select(SignInFailure.key, SignInFailure.blocked_until, SignInFailure.last_failure_at)
        .where(SignInFailure.key.in_([*found.failure_keys, found.known]))
    )}
    known = found.known in rows and now - rows[found.known][1] < KNOWN_FOR
    counted = [found.client, found.pair] + ([] if known else [found.account])
    waits = [rows[key][0] - now for key in counted if key in rows and now - rows[key][1] < FORGET_AFTER]
    if waits and max(waits) > timedelta(0):
        raise Throttled(max(waits))


def record_failure(session: Session, *, attempt_keys: list[str], now: datetime | None = None) -> None:
    """Count a failed attempt against each key (call in a write session)."""
    now = now or utcnow()
    insert_ignore(session, SignInFailure.__table__,
                  [{"key": key, "failures": 0, "last_failure_at": now, "blocked_until": now} for key in attempt_keys])
    for key in attempt_keys:
        failures, last = session.execute(
            select(SignInFailure.failures, SignInFailure.last_failure_at).where(SignInFailure.key == key)
            .with_for_update()
        ).one()
        failures = 1 if now - _aware(last) >= FORGET_AFTER else failures + 1
        free = _FREE.get(key.partition(":")[0], FREE_FAILURES)
        session.execute(update(SignInFailure).where(SignInFailure.key == key).values(
            failures=failures, last_failure_at=now, blocked_until=now + delay(failures, free)))


def signed_in(session: Session, *, name: str, client: str | None, now: datetime | None = None) -> None:
    """A success: forget the account's failures and this client's on it, and keep the client as known to the
    account (call in a write session)."""
    now = now or utcnow()
    found = attempt(name=name, client=client)
    session.execute(delete(SignInFailure).where(SignInFailure.key.in_([found.account, found.pair])))
    if found.known is None:
        return
    # Addresses not used for KNOWN_FOR stop being known; their rows go as the account signs in again.
    stale = and_(_known_rows(name), SignInFailure.last_failure_at < now - KNOWN_FOR)
    session.execute(delete(SignInFailure).where(or_(SignInFailure.key == found.known, stale)))
    insert_ignore(session, SignInFailure.__table__,
                  [{"key": found.known, "failures": 0, "last_failure_at": now, "blocked_until": now}])


def clear_account(session: Session, *, name: str, forget_clients: bool = False) -> None:
    """Forget the failures counted against the account `name`, from every client (an admin's unlock); with
    `forget_clients`, also which clients it is known to (a new password)."""
    rows = [SignInFailure.key == f"account:{_name(name)}"[:_KEY_LENGTH],
            SignInFailure.key.startswith(f"pair:{_name(name)}:", autoescape=True)]
    if forget_clients:
        rows.append(_known_rows(name))
    session.execute(delete(SignInFailure).where(or_(*rows)))


def locked_accounts(session: Session, *, now: datetime | None = None) -> dict[str, timedelta]:
    """The accounts (by name) whose failures make attempts wait, from every client not known to them or from
    some client, each with the longest wait left (zero between two waits: the next failure waits again)."""
    now = now or utcnow()
    names = {_name(name): name for name in session.execute(select(Annotator.name).where(
        Annotator.is_system.is_(False))).scalars()}
    rows = session.execute(select(SignInFailure.key, SignInFailure.blocked_until).where(
        or_(and_(SignInFailure.key.startswith("account:"), SignInFailure.failures >= ACCOUNT_FREE_FAILURES),
            and_(SignInFailure.key.startswith("pair:"), SignInFailure.failures >= FREE_FAILURES)),
        SignInFailure.last_failure_at > now - FORGET_AFTER))
    locked: dict[str, timedelta] = {}
    for key, blocked in rows:
        kind, _, folded = key.partition(":")
        if kind == "pair":  # the name has no ":"; the address after it may (IPv6)
            folded = folded.partition(":")[0]
        if folded in names:
            name = names[folded]
            locked[name] = max(locked.get(name, timedelta(0)), _aware(blocked) - now, timedelta(0))
    return dict(sorted(locked.items()))


def _known_rows(name: str) -> ColumnElement[bool]:
    return SignInFailure.key.startswith(f"known:{_name(name)}:", autoescape=True)


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; every time we store is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=utcnow().tzinfo)
