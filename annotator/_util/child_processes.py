"""Worker processes that die with their parent, even when the parent is killed with SIGKILL.

A process pool's workers wait for work on a pipe; if their parent dies without shutting the pool down (a
SIGKILL, the OOM killer), nothing tells them to stop and they live on as orphans. `die_with_parent` is the
pool's initializer: on Linux the kernel sends the worker SIGKILL when its parent exits
(`prctl(PR_SET_PDEATHSIG)`); elsewhere, and as a second guard, a daemon thread polls the parent's pid and
ends the worker when the parent is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.5


def _ask_the_kernel() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the polling thread still guards the worker


def _watch(parent_pid: int) -> None:
    event = threading.Event()
    while not event.wait(POLL_SECONDS):
        if os.getppid() != parent_pid:
            os._exit(1)


def die_with_parent(parent_pid: int) -> None:
    """Initializer of a worker process started by `parent_pid`: end it when that process is gone."""
    _ask_the_kernel()
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
    threading.Thread(target=_watch, args=(parent_pid,), name="lifeline", daemon=True).start()
