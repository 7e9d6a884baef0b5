"""Engine, sessions and schema upgrades.

SQLite is set up for several annotators writing at once: WAL, a busy timeout, foreign keys, and
`BEGIN IMMEDIATE` for every read-modify-write (a deferred transaction that reads and then writes fails
with "database is locked" under concurrency, busy timeout or not). PostgreSQL needs none of that.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from annotator.settings.environment import PROJECT_ROOT, settings

if TYPE_CHECKING:
    # Imported where a session is made: a command that reads through Core (`read_connection`) never loads the ORM.
    from sqlmodel import Session

MIGRATIONS_DIR = PROJECT_ROOT / "db" / "migrations"
# How long a writer waits for SQLite's write lock. Generous: with sixteen annotators in one Streamlit process
# on a busy machine, the holder's short transaction can wait seconds for the GIL before it commits.
SQLITE_BUSY_TIMEOUT_MS = 30_000
# SQLite's page cache per connection, in KiB (its default, 2 MB); a big import's transaction asks for more
# (`write_session(cache_mib=...)`): with nine indexes on the transcripts, a big insert in the default cache
# re-reads evicted index pages all along.
SQLITE_CACHE_KIB = 2000
# PostgreSQL's SQLSTATEs for "try again": lock_not_available (lock_timeout), serialization_failure, deadlock.
_PG_BUSY_STATES = frozenset({"55P03", "40001", "40P01"})
# The newest migration's revision. Knowing it here spares every command Alembic's start-up when the database
# is up to date; tests/database/test_engine.py checks it against the migration scripts, so a new migration must update
# it.
HEAD_REVISION = "0028_settled_index"


class DatabaseBusy(RuntimeError):
    """Another transaction held the lock longer than this write would wait (SQLite's write lock, a PostgreSQL
    row lock or serialization conflict): nothing was written, and the same write may simply be tried again."""


def page_busy_seconds() -> float:
    """How long a page's write (a label, a decision, a review) waits for a lock before the page says the database
    is busy (`ANNOTATOR_PAGE_BUSY_SECONDS`)."""
    return settings().page_busy_seconds


def is_busy(exc: BaseException) -> bool:
    """Whether a database error means "locked, try again" rather than a fault (SQLite and PostgreSQL)."""
    if not isinstance(exc, DBAPIError):
        return False
    original = exc.orig
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    if state is not None:
        return state in _PG_BUSY_STATES
    message = str(original).lower()
    return "database is locked" in message or "database is busy" in message


def database_url() -> str:
    """The database URL from `ANNOTATOR_DATABASE_URL`, else the project's SQLite file."""
    return settings().database_url


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
        options = conn.get_execution_options()
        # The busy timeout is the connection's; a pooled connection keeps what the last transaction set, so
        # each transaction sets its own when it differs (a page's write waits less than an import).
        busy_ms = options.get("sqlite_busy_ms", SQLITE_BUSY_TIMEOUT_MS)
        info = conn.connection.info
        if info.get("busy_ms", SQLITE_BUSY_TIMEOUT_MS) != busy_ms:
            conn.exec_driver_sql(f"PRAGMA busy_timeout={int(busy_ms)}")
            info["busy_ms"] = busy_ms
        cache_kib = options.get("sqlite_cache_kib", SQLITE_CACHE_KIB)  # likewise the cache's size
        if info.get("cache_kib", SQLITE_CACHE_KIB) != cache_kib:
            conn.exec_driver_sql(f"PRAGMA cache_size=-{int(cache_kib)}")
            info["cache_kib"] = cache_kib
        # A bulk write's statement journals in memory: each row inserted into a table with triggers (`annotation`'s
        # keep `labelday`) has one, which SQLite otherwise keeps in a temporary file, written row by row.
        temp_store = "MEMORY" if options.get("sqlite_temp_memory") else "DEFAULT"
        if info.get("temp_store", "DEFAULT") != temp_store:
            conn.exec_driver_sql(f"PRAGMA temp_store={temp_store}")
            info["temp_store"] = temp_store
        conn.exec_driver_sql(f"BEGIN {options.get('sqlite_begin', 'DEFERRED')}")


@cache
def get_engine(url: str | None = None) -> Engine:
    """One engine per database URL and process, with the schema upgraded to the newest revision."""
    engine = open_engine(url or database_url())
    upgrade(engine)
    return engine


def open_engine(url: str) -> Engine:
    """An engine on a database whose schema is known to be at the newest revision (a child process of an app server
    that upgraded it: `annotator.figures.child`)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        _setup_sqlite(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
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
    from sqlmodel import Session

    with Session(engine or get_engine(), expire_on_commit=False) as session:
        yield session


@contextmanager
def read_connection(engine: Engine | None = None) -> Iterator[Connection]:
    """A Core connection for reading, rolled back at the end: for a read over `annotator.database.light_tables` that
    should not pay for the ORM's start-up (SQLModel and the table classes: a third of a second of the `report`
    command)."""
    with (engine or get_engine()).connect() as connection:
        yield connection


@contextmanager
def write_session(
    engine: Engine | None = None, *, busy_seconds: float | None = None, cache_mib: int | None = None
) -> Iterator[Session]:
    """A session whose whole body is one transaction, committed on success and rolled back on error.

    On SQLite the transaction starts with `BEGIN IMMEDIATE`, so a read followed by a write cannot fail
    with "database is locked" halfway through. With `busy_seconds` the transaction waits at most that long for
    a lock (SQLite's busy timeout, PostgreSQL's `lock_timeout`) and raises `DatabaseBusy`, having written
    nothing, when another holds it longer, or when no connection of the engine's pool came free in its time (an
    app server whose every connection is in use). With `cache_mib` SQLite's page cache holds up to that many MiB during
    the transaction (a big import's), and its temporary storage (statement journals) in memory; the defaults
    again for the connection's next one.
    """
    engine = engine or get_engine()
    if is_sqlite(engine):
        options: dict[str, Any] = {"sqlite_begin": "IMMEDIATE"}
        if busy_seconds is not None:
            options["sqlite_busy_ms"] = round(busy_seconds * 1000)
        if cache_mib is not None:
            options["sqlite_cache_kib"] = cache_mib * 1024
            options["sqlite_temp_memory"] = True
        bind = engine.execution_options(**options)
    else:
        bind = engine
    from sqlmodel import Session

    try:
        with Session(bind, expire_on_commit=False) as session:
            with session.begin():
                if busy_seconds is not None and not is_sqlite(engine):
                    session.execute(text(f"SET LOCAL lock_timeout = {round(busy_seconds * 1000)}"))
                yield session
    except DBAPIError as exc:
        if busy_seconds is not None and is_busy(exc):
            raise DatabaseBusy(str(exc.orig)) from exc
        raise
    except PoolTimeout as exc:
        if busy_seconds is not None:
            raise DatabaseBusy("no database connection came free in time") from exc
        raise


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
