"""The row of `figuresnapshot` that holds one kind of figures (`annotator.figures.snapshots`): reading it, the
lease on its recomputation (claimed, renewed, released) and storing new figures or a failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlmodel import Session

from annotator.database.engine import insert_ignore
from annotator.database.models import FigureSnapshot, utcnow


@dataclass(frozen=True)
class Stored:
    """A row of `figuresnapshot` without its figures."""

    generation: int
    version: str | None
    computed_at: datetime | None
    lease_holder: str | None
    lease_until: datetime | None
    error: str | None
    seconds: float | None = None  # how long the stored figures took to compute

    def leased(self, now: datetime) -> bool:
        """Whether a server is recomputing them (its lease has not run out)."""
        return self.lease_until is not None and self.lease_until > now


def version_text(version: tuple[Any, ...]) -> str:
    """A fingerprint as the text stored and compared (PostgreSQL's sums are Decimals: their text is exact)."""
    return json.dumps(list(version), default=str)


def stored(session: Session, *, key: str) -> Stored | None:
    row = session.execute(
        select(FigureSnapshot.generation, FigureSnapshot.version, FigureSnapshot.computed_at,
               FigureSnapshot.lease_holder, FigureSnapshot.lease_until, FigureSnapshot.error,
               FigureSnapshot.seconds)
        .where(FigureSnapshot.key == key)
    ).first()
    return None if row is None else Stored(*row)


def stored_value(session: Session, *, key: str) -> tuple[int, str | None]:
    """The stored figures' generation and JSON (read together: the row may have moved on since `stored`)."""
    row = session.execute(
        select(FigureSnapshot.generation, FigureSnapshot.value).where(FigureSnapshot.key == key)
    ).first()
    return (0, None) if row is None else (row[0], row[1])


def claim(session: Session, *, key: str, holder: str, lease: float, seen: int = 0, now: datetime | None = None) -> bool:
    """Take the lease to recompute `key`'s figures, which the caller saw at generation `seen`, unless another
    holder's lease runs or newer figures were stored since (the caller looks again); True when taken."""
    now = now or utcnow()
    insert_ignore(session, FigureSnapshot.__table__, [{"key": key, "generation": 0}])
    taken = session.execute(
        update(FigureSnapshot)
        .where(FigureSnapshot.key == key, FigureSnapshot.generation == seen,
               or_(FigureSnapshot.lease_until.is_(None), FigureSnapshot.lease_until <= now,
                   FigureSnapshot.lease_holder == holder))
        .values(lease_holder=holder, lease_until=now + timedelta(seconds=lease))
    )
    return taken.rowcount == 1


def renew(session: Session, *, key: str, holder: str, lease: float) -> bool:
    """Extend `holder`'s lease; False when it has lost it (run out and taken by another)."""
    renewed = session.execute(
        update(FigureSnapshot).where(FigureSnapshot.key == key, FigureSnapshot.lease_holder == holder)
        .values(lease_until=utcnow() + timedelta(seconds=lease))
    )
    return renewed.rowcount == 1


def store(session: Session, *, key: str, holder: str, version: str, value: str, started: datetime,
          seconds: float) -> None:
    """Store figures whose computation started at `started`, unless newer ones are stored (two computations can
    overlap when a lease ran out), and end `holder`'s lease."""
    session.execute(
        update(FigureSnapshot)
        .where(FigureSnapshot.key == key,
               or_(FigureSnapshot.computed_at.is_(None), FigureSnapshot.computed_at < started))
        .values(generation=FigureSnapshot.generation + 1, version=version, value=value, computed_at=started,
                seconds=seconds, error=None)
    )
    _release(session, key=key, holder=holder)


def fail(session: Session, *, key: str, holder: str, error: str) -> None:
    """Record a failed recomputation (the stored figures stay) and end `holder`'s lease."""
    session.execute(update(FigureSnapshot).where(FigureSnapshot.key == key).values(error=error[:200]))
    _release(session, key=key, holder=holder)


def _release(session: Session, *, key: str, holder: str) -> None:
    session.execute(update(FigureSnapshot).where(FigureSnapshot.key == key, FigureSnapshot.lease_holder == holder)
                    .values(lease_holder=None, lease_until=None))
