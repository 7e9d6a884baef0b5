"""Figures that take seconds to compute, shared by everyone who opens a page, and fresh when they look.

The Team page's agreement over 100,000s of labels takes seconds. The figures are stale when they are older than
`ttl`, or when the data they come from changed: `version` is a cheap fingerprint of that data (e.g. the newest
label event's id, `annotator.freshness`), read on every look. Stale figures are recomputed in a background thread
(one at a time) and the page waits up to `patience` seconds for them: a small project always sees figures that
include what was just imported; a big one sees the last figures at once, marked as being recomputed, and the
page's ticking fragment swaps the new ones in when they are ready (`generation` says when).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Reading(Generic[T]):
    """What a page shows: the figures, their age in seconds, whether newer ones are on the way, and which
    computation they came from (`generation` counts up from 1)."""

    value: T
    age: float
    refreshing: bool
    generation: int


class Snapshot(Generic[T]):
    """The latest result of `compute`; recomputed in a background thread once stale (older than `ttl` seconds,
    or `version()` changed since it was computed)."""

    def __init__(
        self,
        compute: Callable[[], T],
        *,
        ttl: float,
        version: Callable[[], Hashable] | None = None,
        patience: float = 3.0,
    ) -> None:
        self._compute = compute
        self._version = version
        self._ttl = ttl
        self._patience = patience
        self._lock = threading.Lock()
        self._value: T | None = None
        self._value_version: Hashable = None
        self._generation = 0
        self._at = 0.0  # time.monotonic() when the value's computation started
        self._refreshing: threading.Thread | None = None
        self.error: BaseException | None = None  # the last failure (an older value stays)

    def _refresh(self) -> None:
        started = time.monotonic()
        try:
            # The fingerprint before the figures: a change made while they are computed makes them stale again.
            version = self._version() if self._version else None
            value = self._compute()
        except Exception as exc:  # noqa: BLE001  (kept for the page to show; the last good value stays)
            with self._lock:
                self.error, self._refreshing = exc, None
            return
        with self._lock:
            self._value, self._value_version, self._at = value, version, started
            self._generation += 1
            self.error, self._refreshing = None, None

    def _start(self) -> threading.Thread:
        """The running refresh, or a new one (call with the lock held)."""
        if self._refreshing is None:
            self._refreshing = threading.Thread(target=self._refresh, name="snapshot-refresh", daemon=True)
            self._refreshing.start()
        return self._refreshing

    def _stale(self) -> bool:
        """Read the fingerprint outside the lock (it queries the database), compare inside."""
        version = self._version() if self._version else None
        with self._lock:
            return (self._value is None or version != self._value_version
                    or time.monotonic() - self._at > self._ttl)

    def _reading(self) -> Reading[T]:
        with self._lock:
            if self._value is None:
                raise self.error or RuntimeError("no figures yet")
            return Reading(self._value, time.monotonic() - self._at, self._refreshing is not None, self._generation)

    def get(self, *, wait: float | None = None) -> Reading[T]:
        """The figures; when stale, a recomputation starts and this waits up to `wait` seconds (default: the
        snapshot's patience; no limit when there are no figures yet) for it."""
        if self._stale():
            with self._lock:
                thread = self._start()
                first = self._value is None
            thread.join(None if first else (self._patience if wait is None else wait))
        return self._reading()

    def peek(self) -> Reading[T]:
        """The figures as they are, starting a background recomputation when stale (a page's ticking fragment)."""
        return self.get(wait=0.0)

    def refresh(self) -> Reading[T]:
        """Recompute now and wait for it (a running refresh may have read the data before the caller's change:
        it is waited for, then a new one runs)."""
        while True:
            with self._lock:
                running = self._refreshing
                thread = running or self._start()
            thread.join()
            if running is None:
                return self._reading()

    def wait(self) -> None:
        """Wait for a running background refresh (tests and benchmarks)."""
        thread = self._refreshing
        if thread is not None:
            thread.join()


def age_text(reading: Reading[object], *, ttl: float, error: BaseException | None = None) -> str:
    """'Figures from 12 s ago.' with what is going on: new ones on the way, or the last recomputation failed."""
    age = max(0, round(reading.age))
    when = f"{age} s" if age < 120 else f"{age // 60} min"
    text = f"Figures from {when} ago; recomputed when labels change or after {ttl:.0f} s."
    if reading.refreshing:
        text += " New figures are being computed and will show here."
    if error is not None:
        text += f" The last recomputation failed: {type(error).__name__}."
    return text


def show_freshness(snapshot: Snapshot[T], reading: Reading[T], *, ttl: float, key: str) -> None:
    """The figures' age, ticking while the page is open, and a button that recomputes them now.

    Every tick looks at the snapshot (a fingerprint read: milliseconds); once newer figures than the ones on the
    page exist, the whole page runs again to show them.
    """
    import streamlit as st

    @st.fragment(run_every=2)
    def _age() -> None:
        now = snapshot.peek()
        if now.generation != reading.generation:
            st.rerun()
        left, right = st.columns([2, 1], vertical_alignment="center")
        left.caption(age_text(now, ttl=ttl, error=snapshot.error))
        right.button("Recompute now", width="stretch", key=f"{key}_refresh", on_click=snapshot.refresh,
                     help="Recompute the figures from the data as it is now.")

    _age()
