"""Databases that start at the newest schema revision without running the migrations for each test: a SQLite file
and a PostgreSQL database migrated once per test process, copied for each test."""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from contextlib import closing
from functools import cache
from pathlib import Path

from annotator.database.engine import open_engine, upgrade
from tests.support.postgres import create_database

POSTGRES_TEMPLATE = "t_migrated"


@cache
def _sqlite_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="annotator-migrated-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "annotator.sqlite"
    made = open_engine(f"sqlite:///{path}")
    upgrade(made)
    made.dispose()
    with closing(sqlite3.connect(path)) as connection:  # one self-contained file, no write-ahead log beside it
        connection.execute("PRAGMA journal_mode=DELETE")
    return path


def migrated_sqlite(path: Path) -> str:
    """The URL of a new SQLite file at `path` holding the newest schema, as `get_engine` would leave it."""
    shutil.copyfile(_sqlite_template(), path)
    return f"sqlite:///{path}"


@cache
def _postgres_template(server_url: str) -> str:
    made = open_engine(create_database(server_url, POSTGRES_TEMPLATE))
    upgrade(made)
    made.dispose()  # no connection may be open to a template while it is copied
    return POSTGRES_TEMPLATE


def migrated_postgres(server_url: str, name: str) -> str:
    """The URL of a new database `name` on the server holding the newest schema."""
    return create_database(server_url, name, template=_postgres_template(server_url))
