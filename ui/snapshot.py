"""Figures that take seconds to compute, served at once: the last result, refreshed in the background.

The Team page's agreement over 100,000s of labels takes seconds; the page shows the latest snapshot at once and,
when it is older than its time to live, has a background thread compute the next one (one at a time). Only the
very first visit after the server starts waits for a computation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Snapshot(Generic[T]):
    """The latest result of `compute`, recomputed in a background thread once older than `ttl` seconds."""

    def __init__(self, compute: Callable[[], T], *, ttl: float) -> None:
        self._compute = compute
        self._ttl = ttl
        self._lock = threading.Lock()
        self._value: T | None = None
        self._at = 0.0  # time.monotonic() when the value was computed
        self._refreshing: threading.Thread | None = None
        self.error: BaseException | None = None  # the last background failure (the old value stays)

    def _refresh(self) -> None:
        try:
            value = self._compute()
        except Exception as exc:  # noqa: BLE001  (kept for the page to show; the last good value stays)
            with self._lock:
                self.error, self._refreshing = exc, None
            return
        with self._lock:
            self._value, self._at, self.error, self._refreshing = value, time.monotonic(), None, None

    def get(self) -> tuple[T, float]:
        """The latest value and its age in seconds; computes it here only when there is none yet."""
        with self._lock:
            first = self._value is None
        if first:
            value = self._compute()
            with self._lock:
                if self._value is None:
                    self._value, self._at = value, time.monotonic()
        with self._lock:
            age = time.monotonic() - self._at
            if age > self._ttl and self._refreshing is None:
                self._refreshing = threading.Thread(target=self._refresh, name="snapshot-refresh", daemon=True)
                self._refreshing.start()
            return self._value, age  # type: ignore[return-value]

    def wait(self) -> None:
        """Wait for a running background refresh (tests and benchmarks)."""
        thread = self._refreshing
        if thread is not None:
            thread.join()
