"""Python's cyclic garbage collector paused while a computation builds many acyclic objects (`paused`).

A report down to the item builds a tuple per item and model (56,600 for a leaderboard) and the dicts and lists
that count them; none can form a cycle, yet every few hundred allocations the collector runs, and its full passes
walk every object alive, the libraries' included: a third of a fresh `report`'s counting time. Reference counting
still frees everything as usual; only cycles wait until the pause ends. Process-wide, so nested and concurrent
pauses (two threads of an app server) count: the collector runs again when the last one ends, if it ran before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def paused() -> Iterator[None]:
    """`with paused():` no cyclic garbage collection inside (reference counting goes on)."""
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
