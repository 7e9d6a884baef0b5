"""Each annotator's labels and seconds spent per day, as the database keeps them in `labelday`.

Triggers on `annotation` (migration 0026) append a row of changes to `labelday` in the same transaction as every
label written, changed or deleted, by the app or anything else, so the counts never drift from the labels. The rows
are only ever added, never updated in place, so that an import and an annotator's keypress touching the same
annotator and day never wait for each other's row lock. Reading sums them per annotator and day: a few rows per
person and day plus the changes since they were last folded together (`compact`).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import Engine, func, select, text
from sqlmodel import Session

from annotator.database.engine import DatabaseBusy, is_sqlite, write_session
from annotator.database.models import LabelDay

# Rows of changes beyond one per annotator and day that a read lets pass before folding them together.
COMPACT_AFTER = 5_000
# A fold waits this long for the lock at most (another fold, SQLite's writer), else it is left to the next read.
_COMPACT_BUSY_SECONDS = 0.1
_SUMMED = ("SELECT annotator_id, day, sum(labels) AS labels, sum(seconds) AS seconds FROM {rows} "
           "GROUP BY annotator_id, day HAVING sum(labels) <> 0 OR sum(seconds) <> 0")
# PostgreSQL: the rows a fold deletes are the rows it sums, in one statement; a fold or a writer at the same time
# either sees a row before it goes or not at all, so no change is counted twice or lost.
_PG_FOLD = ("WITH gone AS (DELETE FROM labelday WHERE id <= :last RETURNING annotator_id, day, labels, seconds) "
            "INSERT INTO labelday (annotator_id, day, labels, seconds) " + _SUMMED.format(rows="gone"))
# SQLite: the write lock holds every other writer off between the two statements.
_SQLITE_FOLD = ("INSERT INTO labelday (annotator_id, day, labels, seconds) "
                + _SUMMED.format(rows="(SELECT * FROM labelday WHERE id <= :last)"),
                "DELETE FROM labelday WHERE id <= :last")


def per_day(session: Session) -> list[tuple[int, str, int, float]]:
    """(annotator id, day as 'YYYY-MM-DD', labels, seconds spent) of every annotator and day with labels, folding the
    changes together when they have piled up."""
    rows = session.execute(
        select(LabelDay.annotator_id, LabelDay.day, func.sum(LabelDay.labels), func.sum(LabelDay.seconds),
               func.count())
        .group_by(LabelDay.annotator_id, LabelDay.day)
    ).all()
    days = [(who, _day_text(day), int(labels), float(seconds or 0.0))
            for who, day, labels, seconds, _ in rows if labels]
    if sum(count for *_, count in rows) - len(rows) > COMPACT_AFTER:
        compact(session.get_bind().engine)
    return days


def _day_text(day: Any) -> str:
    return day.isoformat() if isinstance(day, date) else str(day)


def compact(engine: Engine) -> bool:
    """Fold `labelday`'s rows into one per annotator and day (none for a day whose labels are all gone), in a
    transaction of its own; False when another holds the lock (nothing changed: the next read tries again)."""
    try:
        with write_session(engine, busy_seconds=_COMPACT_BUSY_SECONDS) as session:
            last = session.execute(select(func.max(LabelDay.id))).scalar()
            if last is None:
                return True
            if is_sqlite(engine):
                for statement in _SQLITE_FOLD:
                    session.execute(text(statement), {"last": last})
            else:
                session.execute(text(_PG_FOLD), {"last": last})
    except DatabaseBusy:
        return False
    return True
