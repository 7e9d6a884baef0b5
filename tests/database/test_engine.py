"""The engine and the schema: SQLite settings, migrations up and down on both backends."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.exc import TimeoutError as PoolTimeout

from annotator.database.engine import (
    HEAD_REVISION,
    SQLITE_CACHE_KIB,
    DatabaseBusy,
    _alembic_config,
    current_revision,
    get_engine,
    read_session,
    upgrade,
    write_session,
)
from annotator.database.light_tables import EXPRESSION_INDEXES
from annotator.database.models import SQLModel
from tests.conftest import PROJECT_ROOT
from tests.support.postgres import create_database, drop_database


def test_sqlite_connections_are_set_up_for_concurrent_writers(sqlite_engine: Engine) -> None:
    with sqlite_engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_a_write_session_asks_for_a_bigger_sqlite_cache_for_its_transaction_only(sqlite_engine: Engine) -> None:
    """`write_session(cache_mib=...)` (an import's): SQLite's page cache is that big during the transaction, and its
    temporary storage in memory (2); the connection's next transaction has the defaults again (the pool keeps the
    connection, and its pragmas)."""
    sqlite_engine.pool.dispose()  # one pooled connection, whichever transaction comes
    pragmas = text("SELECT cache_size, temp_store FROM pragma_cache_size, pragma_temp_store")
    with write_session(sqlite_engine, cache_mib=64) as session:
        assert tuple(session.execute(pragmas).one()) == (-64 * 1024, 2)
    with read_session(sqlite_engine) as session:
        assert tuple(session.execute(pragmas).one()) == (-SQLITE_CACHE_KIB, 0)
    with write_session(sqlite_engine) as session:
        assert tuple(session.execute(pragmas).one()) == (-SQLITE_CACHE_KIB, 0)


def test_default_database_is_created_on_first_use(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "dir" / "annotator.sqlite"
    engine = get_engine(f"sqlite:///{db}")
    assert db.exists()
    heads = ScriptDirectory.from_config(_alembic_config(engine)).get_heads()
    assert current_revision(engine) == tuple(sorted(heads))


def test_migrations_build_the_models_schema_and_downgrade_cleanly(engine: Engine) -> None:
    """What the migrations create is exactly what the models declare, and every migration can be undone."""
    tables = set(inspect(engine).get_table_names()) - {"alembic_version"}
    assert tables == set(SQLModel.metadata.tables)
    with engine.connect() as conn:
        # Types, nullability, indexes and constraints too: autogenerate finds nothing left to migrate.
        # Expression indexes aside: the database gives their expressions back in its own words (PostgreSQL
        # adds casts and parentheses, SQLite none at all), so Alembic cannot compare them; checked below.
        context = MigrationContext.configure(conn, opts={"include_object": _comparable})
        assert compare_metadata(context, SQLModel.metadata) == []
        assert EXPRESSION_INDEXES <= {index["name"] for index in _indexes(conn, "transcript")}
    config = _alembic_config(engine)
    command.downgrade(config, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    command.upgrade(config, "heads")
    assert set(inspect(engine).get_table_names()) - {"alembic_version"} == tables


def _comparable(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    return not (type_ == "index" and name in EXPRESSION_INDEXES)


def _indexes(conn: object, table: str) -> list[dict]:
    if conn.dialect.name == "sqlite":  # SQLAlchemy does not reflect expression indexes on SQLite
        names = conn.execute(text(f"SELECT name FROM pragma_index_list('{table}')")).scalars()
        return [{"name": name} for name in names]
    return inspect(conn).get_indexes(table)


def test_head_revision_names_the_newest_migration(sqlite_engine: Engine) -> None:
    """`HEAD_REVISION` lets an up-to-date database skip Alembic; it must be the scripts' one head."""
    assert ScriptDirectory.from_config(_alembic_config(sqlite_engine)).get_heads() == [HEAD_REVISION]


def test_an_older_database_is_upgraded_on_first_use(sqlite_engine: Engine) -> None:
    config = _alembic_config(sqlite_engine)
    command.downgrade(config, "-1")
    assert current_revision(sqlite_engine) not in ((), (HEAD_REVISION,))
    upgrade(sqlite_engine)
    assert current_revision(sqlite_engine) == (HEAD_REVISION,)


@pytest.mark.postgres
def test_several_servers_starting_at_once_on_a_new_postgres_database_upgrade_it_once(postgres_url: str) -> None:
    """App servers and workers of a new version start together: one process upgrades the schema, the others
    wait for it (an advisory lock) and find it done, instead of failing on tables that appeared meanwhile."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = create_database(postgres_url, name)
    try:
        starting = [
            subprocess.Popen([sys.executable, "-c", "from annotator.database.engine import get_engine; get_engine()"],
                             env={**os.environ, "ANNOTATOR_DATABASE_URL": url}, cwd=PROJECT_ROOT,
                             stderr=subprocess.PIPE, text=True)
            for _ in range(4)
        ]
        failures = [process.communicate(timeout=120)[1] for process in starting if process.wait(timeout=120) != 0]
        assert failures == []
        assert current_revision(get_engine(url)) == (HEAD_REVISION,)
    finally:
        get_engine(url).dispose()
        drop_database(postgres_url, name)


def test_a_page_write_finding_no_free_connection_is_busy_not_an_error(database_url: str) -> None:
    """Every connection of the app server's pool in use past the pool's wait: a page's write says "busy" (and is
    tried again), as when a lock is held; a write without a busy limit keeps the pool's own error."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0, pool_timeout=0.2)
    try:
        with engine.connect() as held:
            held.execute(text("SELECT 1"))
            with pytest.raises(DatabaseBusy, match="no database connection"):
                with write_session(engine, busy_seconds=1) as session:
                    session.execute(text("SELECT 1"))
            with pytest.raises(PoolTimeout):
                with write_session(engine) as session:
                    session.execute(text("SELECT 1"))
        with write_session(engine, busy_seconds=1) as session:  # free again: the write goes through
            assert session.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        engine.dispose()
