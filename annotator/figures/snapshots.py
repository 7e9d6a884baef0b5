"""Figures that take seconds to compute (Team, Report: `annotator.figures.pages`), shared by every app server through
the database, and fresh when they are looked at.

The latest figures of each kind are one row of `figuresnapshot`: their JSON, the fingerprint of the data they
were computed from (`Figures.version`, e.g. the newest label event's id) and when. Any server's look reads that
row (a primary-key read; the JSON only when its `generation` moved since this process last read it), so a
second server's first look, or a restarted server's, shows the stored figures at once, with their age.

They are stale when older than `ttl` or when the data's fingerprint moved. A look at stale figures starts one
recomputation in a background thread of the server that looked, unless another server is at it: the recomputing
server holds a lease on the row (`lease_holder`, `lease_until`), taken in one conditional UPDATE (a row lock on
PostgreSQL, the write lock on SQLite) and renewed while it computes, so that a server that dies halfway frees it
within `LEASE_SECONDS`. The look waits up to `patience` seconds for the new figures (no limit when none are stored
yet) when the stored ones took at most `QUICK_SECONDS` to compute: a small project always sees figures that include
what was just imported; a big one sees the last figures at once, marked as being recomputed, and the page's ticking
fragment swaps the new ones in when their `generation` appears.

Figures given a `process` ("module:NAME") are computed in a child process (`annotator.figures.child`) unless the
stored ones were quick: the recomputing thread only waits for it, so the seconds of work and the memory they take
stay out of the server (no keypress waits for its interpreter lock). `latest` does not wait for the first ones.
The rows themselves are `snapshot_rows`'.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from annotator.database.engine import DatabaseBusy, read_session, write_session
from annotator.database.models import utcnow
from annotator.figures import child
from annotator.figures.pages import Figures
from annotator.figures.snapshot_rows import Stored, claim, fail, renew, stored, stored_value, version_text

__all__ = ["Reading", "Snapshot", "Stored", "claim", "fail", "renew", "stored", "stored_value", "version_text"]

LEASE_SECONDS = 15.0  # a recomputation's claim on the row, renewed every third of it while the computation runs
# A look waits for new figures only when the stored ones took at most this long to compute: a big project's page
# shows its last figures at once (marked as being recomputed) instead of waiting seconds on every stale look.
QUICK_SECONDS = 0.5
POLL_SECONDS = 0.1  # how often a look waiting for another server's figures reads their row
CLAIM_BUSY_SECONDS = 0.5  # a look does not wait behind a long write (an import on SQLite) to claim the row
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reading:
    """What a page shows: the figures, their age in seconds, whether newer ones are on the way (on any server),
    which computation they came from (`generation` counts up from 1, the same on every server) and what the
    last recomputation failed with (a type name; None after a success)."""

    value: Any
    age: float
    refreshing: bool
    generation: int
    error: str | None = None


class Snapshot:
    """The latest stored `figures` of the database behind `engine`, recomputed by one server at a time once stale
    (older than `ttl` seconds, or `figures.version` moved since they were computed). One per process and
    database (the pages keep it in `st.cache_resource`): it holds the last figures it read and its own
    recomputation's thread."""

    def __init__(self, engine: Engine, figures: Figures, *, ttl: float, patience: float = 3.0,
                 lease: float = LEASE_SECONDS, process: str | None = None) -> None:
        self._engine = engine
        self._figures = figures
        # "module:NAME" of `figures`: computed in a child process (`annotator.figures.child`), not in this one.
        self._process = process
        self._ttl = ttl
        self._patience = patience
        self._lease = lease
        self.holder = f"{socket.gethostname()[:100]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cached: tuple[int, Any] = (0, None)  # the generation and figures this process last read
        self._failure: BaseException | None = None  # this process's last recomputation's failure

    # -- computing, in a background thread of the server that holds the lease

    def _compute(self, here: bool) -> None:
        stop = threading.Event()
        threading.Thread(target=self._renew, args=(stop,), name="snapshot-lease", daemon=True).start()
        failure: BaseException | None = None
        try:
            self._compute_and_store(here)
        except Exception as exc:  # noqa: BLE001  (kept for the page to show; the last good figures stay)
            _log.exception("recomputing the %s figures failed", self._figures.key)
            failure = exc
            said = str(exc) if isinstance(exc, child.ChildFailed) else type(exc).__name__
            try:
                with write_session(self._engine) as session:
                    fail(session, key=self._figures.key, holder=self.holder, error=said)
            except Exception:  # noqa: BLE001  (the database itself failed: the lease runs out by itself)
                _log.exception("recording the failure of the %s figures failed", self._figures.key)
        finally:
            stop.set()
            with self._lock:
                self._failure, self._thread = failure, None

    def _compute_and_store(self, here: bool) -> None:
        row = self._row()
        # Figures that took at most QUICK_SECONDS are computed here: a child's start costs more than they do.
        quick = row is not None and row.generation > 0 and row.seconds is not None and row.seconds <= QUICK_SECONDS
        if self._process is None or quick or here:
            child.compute_and_store(self._engine, self._figures, holder=self.holder)
        else:  # this thread only waits for the child (and the lease is renewed from this process meanwhile)
            child.run(self._engine, self._process, holder=self.holder)

    def _renew(self, stop: threading.Event) -> None:
        while not stop.wait(self._lease / 3):
            try:
                with write_session(self._engine, busy_seconds=CLAIM_BUSY_SECONDS) as session:
                    renew(session, key=self._figures.key, holder=self.holder, lease=self._lease)
            except DatabaseBusy:
                continue  # the next renewal comes well before the lease runs out

    def _start(self, seen: int, *, here: bool = False) -> threading.Thread | None:
        """This process's running recomputation, or a new one of the figures seen at generation `seen` when the
        lease is free; None while another server holds it, once newer figures are stored, or when the database
        is too busy to take it now."""
        with self._lock:
            if self._thread is not None:
                return self._thread
            try:
                with write_session(self._engine, busy_seconds=CLAIM_BUSY_SECONDS) as session:
                    taken = claim(session, key=self._figures.key, holder=self.holder, lease=self._lease, seen=seen)
            except DatabaseBusy:
                return None
            if not taken:
                return None
            self._thread = threading.Thread(target=self._compute, args=(here,), name="snapshot-refresh", daemon=True)
            self._thread.start()
            return self._thread

    # -- looking

    def _row(self) -> Stored | None:
        with read_session(self._engine) as session:
            return stored(session, key=self._figures.key)

    def _stale(self, row: Stored | None) -> bool:
        if row is None or row.generation == 0 or row.computed_at is None:
            return True
        if (utcnow() - row.computed_at).total_seconds() > self._ttl:
            return True
        with read_session(self._engine) as session:
            return version_text(self._figures.version(session)) != row.version

    def _until_stored(self, here: bool) -> Stored:
        """Wait for the first figures, computing them here when no other server is (no time limit)."""
        while True:
            row = self._row()
            if row is not None and row.generation > 0:
                return row
            with self._lock:
                thread = self._thread
            if thread is None and (row is None or not row.leased(utcnow())):
                thread = self._start(0, here=here)
            if thread is None:
                time.sleep(POLL_SECONDS)  # another server computes them: their row is read again shortly
                continue
            thread.join()
            with self._lock:
                failure = self._failure
            if failure is not None and (self._row() or row).generation == 0:
                raise failure

    def _newer(self, row: Stored, wait: float) -> Stored:
        """Wait up to `wait` seconds for figures newer than `row`'s (ours or another server's recomputation)."""
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            with self._lock:
                thread = self._thread
            if thread is not None:
                thread.join(left)
            newer = self._row() or row
            if newer.generation != row.generation or (thread is None and not newer.leased(utcnow())):
                return newer
            if thread is None:
                time.sleep(min(POLL_SECONDS, max(left, 0.0)))
        return self._row() or row

    def _reading(self, row: Stored) -> Reading:
        generation, value = self._cached
        if generation != row.generation:
            with read_session(self._engine) as session:
                generation, text = stored_value(session, key=self._figures.key)
            value = self._figures.from_json(text) if text is not None else None
            self._cached = (generation, value)
        with self._lock:
            here = self._thread is not None
        now = utcnow()
        assert row.computed_at is not None
        return Reading(value, (now - row.computed_at).total_seconds(), here or row.leased(now), generation, row.error)

    def get(self, *, wait: float | None = None, here: bool = False) -> Reading:
        """The figures; when stale, a recomputation starts (on this server, unless another server is at it) and
        this waits up to `wait` seconds (default: the patience; no limit when none are stored yet) for it. `here`
        computes them in this process even with a `process` (the caller knows they are small)."""
        row = self._row()
        if self._stale(row):
            if row is None or row.generation == 0:
                row = self._until_stored(here)
            else:
                if not row.leased(utcnow()):
                    self._start(row.generation, here=here)  # else another server (or this one) recomputes them already
                waiting = self._patience if wait is None else wait
                if wait is None and row.seconds is not None and row.seconds > QUICK_SECONDS:
                    waiting = 0.0  # they would not come within a look's patience
                if waiting > 0:
                    row = self._newer(row, waiting)
        assert row is not None
        return self._reading(row)

    def peek(self) -> Reading:
        """The figures as they are, starting a recomputation when stale (a page's ticking fragment)."""
        return self.get(wait=0.0)

    def latest(self, *, wait: float | None = None) -> Reading:
        """`get`, except while no figures are stored yet: then a reading of value None at once (the first ones on
        their way, or the error their last computation failed with) instead of waiting for them."""
        row = self._row()
        if row is not None and row.generation > 0:
            return self.get(wait=wait)
        with self._lock:
            here = self._thread is not None
        if not here and (row is None or not row.leased(utcnow())):
            here = self._start(0) is not None
        leased = row is not None and row.leased(utcnow())
        return Reading(None, 0.0, here or leased, 0, None if row is None else row.error)

    def refresh(self) -> Reading:
        """Recompute now and wait for it: figures whose computation started after this call. A recomputation
        already running (here or on another server) may have read the data before the caller's change: it is
        waited for, then a new one runs."""
        pressed = utcnow()
        while True:
            row = self._row()
            if row is not None and row.computed_at is not None and row.computed_at >= pressed:
                return self._reading(row)
            with self._lock:
                running = self._thread
            if running is not None:
                running.join()
                continue
            if row is not None and row.leased(utcnow()):
                time.sleep(POLL_SECONDS)
                continue
            thread = self._start(0 if row is None else row.generation)
            if thread is None:
                continue  # taken by another server, or newer figures stored, a moment ago: the loop looks again
            thread.join()
            with self._lock:
                failure = self._failure
            row = self._row()
            assert row is not None
            if (row.computed_at is not None and row.computed_at >= pressed) or (failure and row.generation):
                return self._reading(row)  # the new figures, or the last ones with the failure
            if failure is not None:
                raise failure
            # The thread joined was a look's, started before the press: the loop starts one of its own.

    def wait(self) -> None:
        """Wait for this process's running recomputation (tests and benchmarks)."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()
