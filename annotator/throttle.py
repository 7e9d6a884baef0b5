"""Sign-in throttling: after `FREE_FAILURES` failed sign-ins of one account, or from one client, each further
attempt must wait, twice as long after every failure (`delay`), up to `MAX_DELAY`.

The failures are rows of `signinfailure`, so that every app server (and the next one after a restart) sees
them. A wait is refused before the password is checked: a throttled attempt costs no Argon2 time, and tells an
attacker nothing. A success clears the account's failures; a client's are forgotten `FORGET_AFTER` after its
last failure (a shared office address is not locked out for good by someone's typos).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlmodel import Session

from annotator.db import insert_ignore
from annotator.models import SignInFailure, utcnow

FREE_FAILURES = 5
FIRST_DELAY = timedelta(seconds=2)
MAX_DELAY = timedelta(minutes=15)
FORGET_AFTER = timedelta(hours=1)


class Throttled(Exception):
    """Too many recent failures: the attempt was not checked; `wait` is how long until the next may be."""

    def __init__(self, wait: timedelta) -> None:
        seconds = max(1, round(wait.total_seconds()))
        super().__init__(f"too many failed sign-ins; try again in {seconds} second{'s' * (seconds != 1)}")
        self.wait = wait


def keys(*, name: str, client: str | None) -> list[str]:
    """The rows an attempt counts against: the account's, and the client's when its address is known."""
    found = [f"account:{name.strip().casefold()}"[:300]]
    if client:
        found.append(f"client:{client}"[:300])
    return found


def delay(failures: int) -> timedelta:
    """How long after the latest failure the next attempt must wait, given the failures so far."""
    if failures < FREE_FAILURES:
        return timedelta(0)
    return min(FIRST_DELAY * 2 ** (failures - FREE_FAILURES), MAX_DELAY)


def check(session: Session, *, attempt_keys: Sequence[str], now: datetime | None = None) -> None:
    """Raise `Throttled` if any of `attempt_keys` must still wait."""
    now = now or utcnow()
    rows = session.execute(
        select(SignInFailure.blocked_until, SignInFailure.last_failure_at).where(SignInFailure.key.in_(attempt_keys))
    )
    waits = [_aware(blocked) - now for blocked, last in rows if now - _aware(last) < FORGET_AFTER]
    if waits and max(waits) > timedelta(0):
        raise Throttled(max(waits))


def record_failure(session: Session, *, attempt_keys: Sequence[str], now: datetime | None = None) -> None:
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
        session.execute(update(SignInFailure).where(SignInFailure.key == key).values(
            failures=failures, last_failure_at=now, blocked_until=now + delay(failures)))


def clear(session: Session, *, key: str) -> None:
    """Forget the failures counted against `key` (an account that signed in)."""
    session.execute(delete(SignInFailure).where(SignInFailure.key == key))


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; every time we store is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=utcnow().tzinfo)
