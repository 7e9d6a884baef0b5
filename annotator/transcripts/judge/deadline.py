"""A time limit for pure-Python work that also holds off the main thread.

math-verify's own timeouts use `signal.alarm`, which only the main thread may set: Streamlit runs page
scripts, and our background runs their work, on other threads. Here one watchdog thread per process keeps
the deadlines and, when one passes, raises `TimeLimit` in the thread that set it (CPython's
`PyThreadState_SetAsyncExc`). Like a signal handler, the exception arrives between bytecodes, so it stops
sympy's Python loops, not one long C call.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class TimeLimit(BaseException):  # noqa: N818  (a BaseException: math-verify catches every Exception)
    """Raised in a thread whose time limit passed."""


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Make `thread_id` raise `exception` at its next bytecode (None withdraws a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), None if exception is None else ctypes.py_object(exception)
    )


class _Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._deadlines: dict[int, tuple[float, int]] = {}  # thread id -> (deadline, token)
        self._fired: set[int] = set()  # tokens whose exception was sent
        self._token = 0
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                for thread_id, (deadline, token) in list(self._deadlines.items()):
                    if deadline <= now:
                        del self._deadlines[thread_id]
                        self._fired.add(token)
                        _raise_in(thread_id, TimeLimit)
                soonest = min((deadline for deadline, _ in self._deadlines.values()), default=None)
                self._lock.wait(None if soonest is None else max(soonest - time.monotonic(), 0.0))

    def start(self, seconds: float) -> int:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="time-limit-watchdog", daemon=True)
                self._thread.start()
            self._token += 1
            self._deadlines[threading.get_ident()] = (time.monotonic() + seconds, self._token)
            self._lock.notify()
            return self._token

    def stop(self, token: int) -> bool:
        """Forget this thread's deadline; True if it had already passed."""
        thread_id = threading.get_ident()
        with self._lock:
            entry = self._deadlines.get(thread_id)
            if entry is not None and entry[1] == token:
                del self._deadlines[thread_id]
            if token in self._fired:
                self._fired.discard(token)
                # The exception may still be pending (sent just as the work finished): withdraw it.
                _raise_in(thread_id, None)
                return True
            return False


_WATCHDOG = _Watchdog()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise `TimeLimit` in this thread if the block runs longer than `seconds` (None: no limit).

    The block must not swallow BaseException; if it does anyway, `TimeLimit` is raised when it ends.
    """
    if seconds is None:
        yield
        return
    token = _WATCHDOG.start(seconds)
    try:
        yield
    finally:
        fired = _WATCHDOG.stop(token)
    if fired:
        raise TimeLimit(f"over {seconds} s")
