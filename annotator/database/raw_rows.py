"""Rows straight from the database driver: SQLAlchemy compiles the select, the driver's cursor returns its rows,
and no per-row type conversion runs. Only for columns whose stored form is the wanted value (numbers, text, JSON
kept as text). Large exports spend a third of their time in that per-row work otherwise. `read_arrays` gives
columns of numbers as NumPy arrays, on PostgreSQL from a binary COPY without a Python object per row.

Each function takes an ORM session or a Core connection (`read_connection`: a read without the ORM's
start-up), and imports nothing of the ORM or the models.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, Connection, Float, Integer, Label, Select, SmallInteger, cast

if TYPE_CHECKING:
    import numpy as np
    from sqlalchemy.orm import Session

STREAM_CHUNK = 5000
ARRAY_CHUNK = 1 << 22  # bytes of a binary COPY parsed at a time
# The array types `read_arrays` reads: each as PostgreSQL sends it in a binary COPY (big-endian) and its SQL type.
_WIRE = {"int16": (">i2", SmallInteger), "int32": (">i4", Integer), "int64": (">i8", BigInteger),
         "float64": (">f8", Float(53))}
_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


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
        while rows := cursor.fetchmany(STREAM_CHUNK):
            for row in rows:
                yield dict(zip(keys, row))


def iter_raw_tuples(bind: Session | Connection, query: Select[Any]) -> Iterator[tuple[Any, ...]]:
    """`iter_raw`'s rows as the driver's tuples, in the query's column order (cheaper still: no dicts)."""
    with _driver_cursor(bind, query) as cursor:
        while rows := cursor.fetchmany(STREAM_CHUNK):
            yield from map(tuple, rows)


def read_arrays(bind: Session | Connection, query: Select[Any], dtypes: Sequence[Any], *,
                chunk_bytes: int = ARRAY_CHUNK) -> dict[str, np.ndarray]:
    """A select's columns as NumPy arrays of `dtypes` (int16, int32, int64 or float64; one per column, in order),
    keyed by the columns' labels, in the rows' order. For numbers without NULLs (COALESCE them in the query).

    On PostgreSQL the rows come through `COPY (query) TO STDOUT (FORMAT binary)`, each column cast to its type, and
    are parsed `chunk_bytes` at a time: no Python object per row, memory of the arrays and one chunk.

    Raises:
        ValueError: a column holds a NULL.
    """
    import numpy as np  # here: the rest of this module serves commands that start without it

    types = [np.dtype(dtype) for dtype in dtypes]
    keys = [column.key for column in query.selected_columns]
    connection = connection_of(bind)
    if connection.dialect.name != "postgresql":
        chunks = [_columns(rows, keys, types) for rows in _chunks(iter_raw_tuples(connection, query))]
    else:
        columns = [cast(column.element if isinstance(column, Label) else column, _WIRE[dtype.name][1]).label(key)
                   for column, key, dtype in zip(query.selected_columns, keys, types, strict=True)]
        compiled = query.with_only_columns(*columns).compile(dialect=connection.dialect,
                                                              compile_kwargs={"literal_binds": True})
        chunks = list(_binary_copy(connection, f"COPY ({compiled}) TO STDOUT (FORMAT binary)", keys, types,
                                   chunk_bytes=chunk_bytes))
    arrays = {}
    for i, (key, dtype) in enumerate(zip(keys, types)):
        arrays[key] = np.concatenate([chunk[i] for chunk in chunks] or [np.empty(0, dtype)])
        for chunk in chunks:  # the chunks' column goes once it is joined: memory of the arrays and one column more
            chunk[i] = chunk[i][:0]
    return arrays


def _chunks(rows: Iterator[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    chunk: list[tuple[Any, ...]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == 100_000:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _columns(rows: list[tuple[Any, ...]], keys: list[str], types: list[np.dtype]) -> list[np.ndarray]:
    import numpy as np

    columns = [list(map(itemgetter(i), rows)) for i in range(len(keys))]
    for key, column in zip(keys, columns):
        if None in column:
            raise ValueError(f"column {key} holds a NULL")
    return [np.array(column, dtype=dtype) for column, dtype in zip(columns, types)]


def _binary_copy(connection: Connection, sql: str, keys: list[str], types: list[np.dtype], *,
                 chunk_bytes: int) -> Iterator[list[np.ndarray]]:
    """The columns of a binary COPY's rows, a chunk at a time. Each row is its number of fields (int16), then per
    field its length (int32, -1 for NULL) and its bytes; a header comes first and an int16 -1 last."""
    import numpy as np

    fields: list[tuple[str, str]] = [("count", ">i2")]
    for i, dtype in enumerate(types):
        fields += [(f"length{i}", ">i4"), (f"value{i}", _WIRE[dtype.name][0])]
    row = np.dtype(fields)
    pending, started = bytearray(), False
    with connection.connection.driver_connection.cursor() as cursor:  # type: ignore[union-attr]
        with cursor.copy(sql) as copy:
            for block in copy:
                pending += block
                if len(pending) >= chunk_bytes:
                    started = started or _skip_header(pending)
                    yield _parse(pending, row, keys, types)
    if not started:
        _skip_header(pending)
    yield _parse(pending, row, keys, types)
    if bytes(pending) != b"\xff\xff":
        raise ValueError("the binary COPY did not end where its rows did")


def _skip_header(pending: bytearray) -> bool:
    if not pending.startswith(_COPY_SIGNATURE):
        raise ValueError("not a binary COPY")
    extension = int.from_bytes(pending[15:19], "big")
    del pending[: 19 + extension]
    return True


def _parse(pending: bytearray, row: np.dtype, keys: list[str], types: list[np.dtype]) -> list[np.ndarray]:
    """The whole rows at the start of `pending` as columns; they are taken off it (what is left is part of a row,
    or the trailer, shorter than any row)."""
    import numpy as np

    count = len(pending) // row.itemsize
    rows = np.frombuffer(pending, dtype=row, count=count)
    wrong = rows["count"] != len(keys)
    for i, dtype in enumerate(types):
        wrong |= rows[f"length{i}"] != dtype.itemsize
    if wrong.any():  # the first such row is read where it starts: a NULL shifts only the rows after it
        first = rows[int(wrong.argmax())]
        lengths = [int(first[f"length{i}"]) for i in range(len(keys))] if first["count"] == len(keys) else []
        raise ValueError(f"column {keys[lengths.index(-1)]} holds a NULL" if -1 in lengths
                         else "the binary COPY's rows do not have the query's columns")
    columns = [rows[f"value{i}"].astype(dtype) for i, dtype in enumerate(types)]
    del rows  # the view's export of `pending` ends here, so that it can shrink
    del pending[: count * row.itemsize]
    return columns
