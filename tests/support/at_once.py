"""Two transactions storing the same browser decision at the same moment (the browser's old and new connection
after a drop), for the queues' "stored once" tests."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sqlalchemy import Engine, text
from sqlmodel import Session

from annotator.database.engine import write_session
from tests.support.waiting import wait_for


def stored_twice_at_once(engine: Engine, store: Callable[[Session], dict[str, str]]) -> tuple[dict[str, str],
                                                                                                dict[str, str]]:
    """Run `store` (it returns the outcomes by decision id) in two write transactions at once: the second starts
    while the first holds its transaction open, and is checked to wait for it (SQLite: the write lock; PostgreSQL:
    the decision id's row, seen waiting on a lock) before the first commits. The outcomes of the first and second."""
    first_stored, second_done, release_first = threading.Event(), threading.Event(), threading.Event()
    outcomes: dict[str, dict[str, str]] = {}

    def first() -> None:
        with write_session(engine) as session:
            outcomes["first"] = store(session)
            first_stored.set()
            release_first.wait(60)

    def second() -> None:
        first_stored.wait(60)
        with write_session(engine) as session:
            outcomes["second"] = store(session)
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    first_stored.wait(60)
    if engine.dialect.name == "postgresql":
        def waiting() -> bool:
            with engine.connect() as conn:
                return conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                         "AND query LIKE '%sentdecision%'")).scalar_one() > 0
        wait_for(waiting, 30, "the second transaction to wait for the first")
    assert not second_done.is_set()
    release_first.set()
    for thread in threads:
        thread.join(60)
    return outcomes["first"], outcomes["second"]
