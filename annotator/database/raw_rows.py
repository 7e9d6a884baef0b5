"""Rows straight from the database driver: SQLAlchemy compiles the select, the driver's cursor returns its rows,
and no per-row type conversion runs. Only for columns whose stored form is the wanted value (numbers, text, JSON
kept as text). Large exports spend a third of their time in that per-row work otherwise.

Each function takes an ORM session or a Core connection (`db.read_connection`: a read without the ORM's
start-up), and imports nothing of the ORM or the models.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Select

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

STREAM_BATCH = 5000


def connection_of(bind: Session | Connection) -> Connection:
    """The Core connection of a session (its transaction's), or the connection itself."""
    return bind if isinstance(bind, Connection) else bind.connection()


@contextmanager
def _driver_cursor(bind: Session | Connection, query: Select[Any]) -> Iterator[Any]:
    """The database driver's cursor with `query` executed on it, closed afterwards."""
    connection = connection_of(bind)
    # IN lists (expanding parameters) rendered as one parameter per value.
    compiled = query.compile(dialect=connection.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(str(compiled), tuple(params[k] for k in compiled.positiontup) if compiled.positional else params)
        yield cursor
    finally:
        cursor.close()


def iter_raw(bind: Session | Connection, query: Select[Any]) -> Iterator[dict[str, Any]]:
    """Stream rows exactly as the database driver returns them, as dicts keyed by the columns' labels."""
    with _driver_cursor(bind, query) as cursor:
        keys = [description[0] for description in cursor.description]
        while rows := cursor.fetchmany(STREAM_BATCH):
            for row in rows:
                yield dict(zip(keys, row))


def iter_raw_tuples(bind: Session | Connection, query: Select[Any]) -> Iterator[tuple[Any, ...]]:
    """`iter_raw`'s rows as the driver's tuples, in the query's column order (cheaper still: no dicts)."""
    with _driver_cursor(bind, query) as cursor:
        while rows := cursor.fetchmany(STREAM_BATCH):
            yield from map(tuple, rows)


def read_frame(bind: Session | Connection, query: Select[Any]) -> Any:
    """A select's rows as a pandas DataFrame of its columns (named by their labels), for numbers and NULLs only.

    On PostgreSQL the rows come through `COPY (query) TO STDOUT` as CSV, parsed in C: millions of rows in a
    second or two, where fetching them as Python tuples takes several (the Team page's 3 million labels).
    """
    import pandas as pd

    connection = connection_of(bind)
    if connection.dialect.name != "postgresql":
        return pd.DataFrame.from_records(list(iter_raw_tuples(connection, query)),
                                         columns=[column.key for column in query.selected_columns])
    compiled = query.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True})
    buffer = io.BytesIO()
    with connection.connection.driver_connection.cursor() as cursor:  # type: ignore[union-attr]
        with cursor.copy(f"COPY ({compiled}) TO STDOUT WITH (FORMAT csv, HEADER)") as copy:
            for block in copy:
                buffer.write(block)
    buffer.seek(0)
    return pd.read_csv(buffer)
