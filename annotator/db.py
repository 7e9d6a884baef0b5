"""Engine, sessions and schema upgrades.

SQLite is set up for several annotators writing at once: WAL, a busy timeout, foreign keys, and
`BEGIN IMMEDIATE` for every read-modify-write (a deferred transaction that reads and then writes fails
with "database is locked" under concurrency, busy timeout or not). PostgreSQL needs none of that.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlmodel import Session

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS_DIR = PROJECT_ROOT / "db" / "migrations"
DEFAULT_DATABASE_PATH = PROJECT_ROOT / "db" / "annotator.sqlite"
# How long a writer waits for SQLite's write lock. Generous: with sixteen annotators in one Streamlit process
# on a busy machine, the holder's short transaction can wait seconds for the GIL before it commits.
SQLITE_BUSY_TIMEOUT_MS = 30_000
# The newest migration's revision. Knowing it here spares every command Alembic's start-up when the database
# is up to date; tests/test_db.py checks it against the migration scripts, so a new migration must update it.
HEAD_REVISION = "0008_transcript_verdicts"


def database_url() -> str:
    """The database URL from `ANNOTATOR_DATABASE_URL`, else the project's SQLite file."""
    return os.environ.get("ANNOTATOR_DATABASE_URL") or f"sqlite:///{DEFAULT_DATABASE_PATH}"


def _setup_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy, not the driver, emit BEGIN so that we can choose IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


@cache
def get_engine(url: str | None = None) -> Engine:
    """One engine per database URL and process, with the schema upgraded to the newest revision."""
    url = url or database_url()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        _setup_sqlite(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    upgrade(engine)
    return engine


def _alembic_config(engine: Engine) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


_upgrade_lock = threading.Lock()


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest revision; a no-op (one cheap query, no Alembic) when it is already there."""
    with _upgrade_lock:
        if current_revision(engine) == (HEAD_REVISION,):
            return
        from alembic import command

        command.upgrade(_alembic_config(engine), "heads")


def current_revision(engine: Engine) -> tuple[str, ...]:
    """The revisions the database is at (none for a new database)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return ()
        return tuple(sorted(conn.execute(text("SELECT version_num FROM alembic_version")).scalars()))


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


@contextmanager
def read_session(engine: Engine | None = None) -> Iterator[Session]:
    """A session for reading; nothing it does is committed."""
    with Session(engine or get_engine(), expire_on_commit=False) as session:
        yield session


@contextmanager
def write_session(engine: Engine | None = None) -> Iterator[Session]:
    """A session whose whole body is one transaction, committed on success and rolled back on error.

    On SQLite the transaction starts with `BEGIN IMMEDIATE`, so a read followed by a write cannot fail
    with "database is locked" halfway through.
    """
    engine = engine or get_engine()
    bind = engine.execution_options(sqlite_begin="IMMEDIATE") if is_sqlite(engine) else engine
    with Session(bind, expire_on_commit=False) as session:
        with session.begin():
            yield session


def insert_ignore(session: Session, table: Any, rows: Iterable[dict[str, Any]]) -> None:
    """INSERT rows in one executemany, skipping those whose key exists (SQLite and PostgreSQL)."""
    rows = list(rows)
    if not rows:
        return
    # Each backend's INSERT ... ON CONFLICT DO NOTHING, imported when used (the dialects cost start-up time).
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    session.execute(insert(table).on_conflict_do_nothing(), rows)
