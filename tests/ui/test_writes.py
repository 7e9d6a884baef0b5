"""A page's write (`ui.writes.page_write`): refused for a disabled account from the moment it is disabled, and
a short, clear "busy" when another transaction holds the lock, on SQLite and PostgreSQL. Nothing is stored in
either case, and the same write succeeds once the lock is free."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, create_engine, select, text

from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.database.engine import DatabaseBusy, read_session, write_session
from annotator.database.models import Annotation
from annotator.labelling import queue
from tests.support.candidates import add_candidates, add_user
from ui.writes import busy_message, declaring, page_write

BUSY_SECONDS = 0.5


def _label(engine: Engine, user: auth.User, candidate_id: int) -> None:
    with declaring(Capability.annotate), page_write(engine, user=user) as session:
        queue.decide(session, annotator_id=user.id, candidate_id=candidate_id, human_check=1, difficulty_eval=0)


def _labels(engine: Engine) -> list[tuple[int, int]]:
    with read_session(engine) as session:
        return [tuple(row) for row in session.execute(select(Annotation.candidate_id, Annotation.annotator_id))]


def test_a_disabled_account_writes_nothing_from_the_moment_it_is_disabled(engine: Engine) -> None:
    (candidate_id,) = add_candidates(engine, 1)
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        auth.set_active(session, name="ann", active=False)
    # The page still holds `ann` (its periodic sign-in check is not due): the write itself refuses.
    with pytest.raises(auth.AccountDisabled, match="disabled; nothing was saved"):
        _label(engine, ann, candidate_id)
    assert _labels(engine) == []
    with write_session(engine) as session:
        auth.set_active(session, name="ann", active=True)
    _label(engine, ann, candidate_id)
    assert _labels(engine) == [(candidate_id, ann.id)]


def test_a_role_taken_away_writes_nothing(engine: Engine) -> None:
    rev = add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        session.execute(text("UPDATE annotator SET role = 'annotator' WHERE id = :id"), {"id": rev.id})
    with pytest.raises(auth.AccountDisabled, match="role is now annotator"), declaring(Capability.review), page_write(
        engine, user=rev
    ):
        pytest.fail("the body of a refused write must not run")


def test_a_write_that_declares_no_capability_is_refused_before_it_opens_a_transaction(engine: Engine) -> None:
    ann = add_user(engine, "ann")
    with pytest.raises(RuntimeError, match="declares its capability"), page_write(engine, user=ann):
        pytest.fail("the body of an undeclared write must not run")


@contextmanager
def _held_lock(engine: Engine, candidate_id: int) -> Iterator[None]:
    """Another connection holding what a label needs: SQLite's write lock, or the candidate's row lock."""
    if engine.dialect.name == "sqlite":
        holder = sqlite3.connect(engine.url.database, timeout=0)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.rollback()
            holder.close()
        return
    other = create_engine(engine.url)
    with other.connect() as conn:
        conn.execute(text("SELECT id FROM candidate WHERE id = :id FOR UPDATE"), {"id": candidate_id})
        yield
        conn.rollback()
    other.dispose()


def test_a_held_lock_makes_the_write_busy_briefly_and_the_same_write_works_after(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANNOTATOR_PAGE_BUSY_SECONDS", str(BUSY_SECONDS))
    (candidate_id,) = add_candidates(engine, 1)
    ann = add_user(engine, "ann")
    with _held_lock(engine, candidate_id):
        start = time.monotonic()
        with pytest.raises(DatabaseBusy):
            _label(engine, ann, candidate_id)
        waited = time.monotonic() - start
    assert BUSY_SECONDS * 0.9 <= waited < BUSY_SECONDS + 2, waited
    assert _labels(engine) == []
    _label(engine, ann, candidate_id)
    assert _labels(engine) == [(candidate_id, ann.id)]


def test_the_busy_message_is_one_line() -> None:
    assert busy_message("label") == "The database is busy, your label was not saved, press again."


@pytest.mark.parametrize(("value", "seconds"), [("2.5", 2.5), ("", 5.0), ("soon", 5.0), ("-1", 5.0), ("nan", 5.0),
                                                 ("1e9", 5.0)])
def test_the_page_busy_timeout_setting_falls_back_on_a_bad_value(
    monkeypatch: pytest.MonkeyPatch, value: str, seconds: float
) -> None:
    from annotator.database.engine import page_busy_seconds

    monkeypatch.setenv("ANNOTATOR_PAGE_BUSY_SECONDS", value)
    assert page_busy_seconds() == seconds
