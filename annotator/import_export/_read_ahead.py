"""An import's files read in a thread of their own, during the moments the importer's thread leaves Python's lock
free: while SQLite runs one of the import's statements (its C code releases the GIL) or while the importer waits for
records. The reading and the database work then share two cores, and the reader waits while the importer's own Python
runs (checking records against the stored ones, planning the writes), so the transaction takes about as long as it
would with every file read before it.

A gate (`threading.Event`) says when the reader may run. It is open only during a single statement, never during
an executemany: there SQLite releases the lock for every row, and a reader holding it in between would make each
row wait for Python's switch interval (`sys.getswitchinterval`).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, event

from annotator.import_export.records import ImportPart

# The reader looks at the gate every `LOOK` records, so the importer, back from a statement, waits about that many
# records' reading for Python's lock (and no switch interval); it hands records over `HAND_OVER` at a time, so the
# threads pass the lock to each other once per that many records while the importer waits for them.
LOOK = 64
HAND_OVER = 2048

_RECORDS, _END, _FAILED = "records", "end", "failed"


class ReadAhead:
    """`with ReadAhead(parts) as reader`: the parts' records, read in order by a thread of its own (`records`)."""

    def __init__(self, parts: Sequence[ImportPart], *, hand_over: int = HAND_OVER) -> None:
        self._parts = parts
        self._hand_over = hand_over
        self._queue: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._held: deque[tuple[str, Any]] = deque()  # taken from the queue by `first`, not yet handed over
        self._gate = threading.Event()
        self._stopped = False
        self._thread = threading.Thread(target=self._read, name="import-reader", daemon=True)

    def __enter__(self) -> ReadAhead:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped = True  # an import that failed: the rest is not read
        self._gate.set()
        self._thread.join()

    def _read(self) -> None:
        try:
            for part in self._parts:
                batch: list[Any] = []
                for number, record in enumerate(part.records, start=1):
                    batch.append(record)
                    if len(batch) == self._hand_over:
                        self._queue.put((_RECORDS, batch))
                        batch = []
                    if number % LOOK == 0:
                        time.sleep(0)  # an importer waiting for Python's lock takes it now
                        self._gate.wait()
                        if self._stopped:
                            return
                if batch:
                    self._queue.put((_RECORDS, batch))
                self._queue.put((_END, None))
        except BaseException as exc:  # raised again in the importer's thread (`records`)
            self._queue.put((_FAILED, exc))

    def _take(self) -> tuple[str, Any]:
        if self._held:
            return self._held.popleft()
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            pass
        self._gate.set()  # nothing read yet: the reader runs while the importer waits
        try:
            return self._queue.get()
        finally:
            self._gate.clear()

    def first(self) -> Any | None:
        """The first record of all the parts (None if they hold none), once read; what reading raised before it is
        raised here."""
        taken: list[tuple[str, Any]] = []
        try:
            for _part in self._parts:
                while (item := self._take())[0] != _END:
                    taken.append(item)
                    if item[0] == _FAILED:
                        raise item[1]
                    return item[1][0]
                taken.append(item)
            return None
        finally:
            self._held.extendleft(reversed(taken))

    def records(self) -> Iterator[Any]:
        """The next part's records as they are read; what reading raised is raised here."""
        while True:
            kind, value = self._take()
            if kind == _END:
                return
            if kind == _FAILED:
                raise value
            yield from value

    @contextmanager
    def during_statements(self, connection: Connection) -> Iterator[None]:
        """Within this block, the reader runs while `connection` executes a single statement."""

        def opened(_conn: Any, _cursor: Any, _statement: Any, _parameters: Any, _context: Any,
                   executemany: bool) -> None:
            if not executemany:
                self._gate.set()

        def closed(*_args: Any) -> None:
            self._gate.clear()

        event.listen(connection, "before_cursor_execute", opened)
        event.listen(connection, "after_cursor_execute", closed)
        try:
            yield
        finally:
            event.remove(connection, "before_cursor_execute", opened)
            event.remove(connection, "after_cursor_execute", closed)
            self._gate.clear()
