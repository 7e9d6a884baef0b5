"""The judge's worker processes: math-verify on (gold, answer) pairs, each pair's time bounded even in C.

Our time limit (`deadline`) stops sympy's Python loops but not one long call into C (an exact power with
billions of digits, if one ever gets past `costly`'s estimate); in such a call the process holds the GIL, so no
thread of it can act either. A worker therefore also arms `faulthandler`'s watchdog, a C thread that needs no
GIL, for each pair: past `HARD_LIMIT_SECONDS` it ends the worker. Before each pair the worker notes, in memory
shared with the caller, which task and pair it is on (`Workers.working_on`). The pool then reports the worker
broken; the caller (`verdicts.PairVerifier`) reads that note, starts a new worker in its place (`Workers.replace`),
takes the noted pair as undecided (as a pair out of time) and sends the rest of the lost work again.
"""

from __future__ import annotations

import atexit
import faulthandler
import os
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from multiprocessing import get_context
from typing import Any

from annotator._util.child_processes import die_with_parent
from annotator.transcripts.judge.equivalence import TIME_LIMIT_SECONDS, Pair, verify_pairs, warm_up

# Past our own limit by a margin: a pair in Python code stops at TIME_LIMIT_SECONDS, only one stuck in C gets here.
HARD_LIMIT_SECONDS = 3 * TIME_LIMIT_SECONDS


class Workers(list[Executor]):
    """The job's worker processes, each its own one-process pool (so that work can be sent to a chosen one);
    `replace` swaps a broken one for a new one."""

    def __init__(self, stack: ExitStack, count: int, hard_limit: float = HARD_LIMIT_SECONDS) -> None:
        super().__init__()
        self._stack = stack
        self.hard_limit = hard_limit
        self.replaced = 0
        self._at: list[Any] = []  # per worker: the pair it is on (shared memory), `SPAN * task + position`
        self._replacing = threading.Lock()
        for _ in range(count):
            executor, at = self._started()
            self.append(executor)
            self._at.append(at)

    def _started(self) -> tuple[Executor, Any]:
        # spawn, not fork: the caller may be a multi-threaded Streamlit server. The workers die with this process,
        # even on SIGKILL (`lifeline`): a killed `judge` leaves no orphans.
        context = get_context("spawn")
        at = context.RawValue("q", -1)
        executor = self._stack.enter_context(ProcessPoolExecutor(
            max_workers=1, mp_context=context, initializer=_start_worker, initargs=(os.getpid(), self.hard_limit, at)))
        with bare_main():  # a submit starts the worker: it loads math-verify (seconds) while the caller goes on
            executor.submit(warm_up)
        return executor, at

    def working_on(self, index: int) -> tuple[int, int] | None:
        """(task, position in its pairs) of the pair worker `index` was last on; None before its first pair."""
        at = int(self._at[index].value)
        return None if at < 0 else divmod(at, SPAN)

    def replace(self, index: int, broken: Executor) -> Executor:
        """A new worker in place of `broken` at `index`, unless another caller replaced it already (the shared
        worker serves several threads)."""
        with self._replacing:
            if self[index] is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self[index], self._at[index] = self._started()
                self.replaced += 1
            return self[index]


_SHARED: list[Workers] = []  # this process's one worker for small jobs, once started
_SHARED_LOCK = threading.Lock()


def shared_worker() -> Workers:
    """This process's one worker for the pairs of small jobs, started on first use and kept for the process's life.

    A small job too verifies its pairs where a pair stuck in C can be stopped; a process that judges often (an app
    server, a worker) starts it once. It is stopped with the process (`lifeline`: even on SIGKILL)."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(Workers(ExitStack(), 1))
        return _SHARED[0]


SPAN = 1 << 20  # pairs a task may hold at most
_WORKER: dict[str, Any] = {"hard_limit": HARD_LIMIT_SECONDS}  # this worker's, set when it starts


def _start_worker(parent_pid: int, hard_limit: float, at: Any) -> None:
    """A judge worker: dies with its parent, and skips the interpreter's teardown when it is told to stop.

    A worker holds only caches (math-verify's parses, sympy's); freeing them one by one at exit took it a second
    or more, which the pool's shutdown waited for. Its results were all sent by then."""
    die_with_parent(parent_pid)
    atexit.register(os._exit, 0)
    _WORKER.update(hard_limit=hard_limit, at=at,
                   sink=open(os.devnull, "w"))  # noqa: SIM115 - the watchdog's traceback goes nowhere, for the worker's life


def verify_stoppable(task: int, pairs: list[Pair]) -> list[bool | None]:
    """`verify_pairs` in a worker, which ends itself if one pair runs past its hard limit; it notes which pair
    it is on (task `task`), so that the caller knows which one it was."""
    verdicts = []
    at = _WORKER.get("at")
    for position, pair in enumerate(pairs):
        if at is not None:
            at.value = task * SPAN + position
        faulthandler.dump_traceback_later(_WORKER["hard_limit"], exit=True, file=_WORKER.get("sink", sys.stderr))
        try:
            verdicts.extend(verify_pairs([pair]))
        finally:
            faulthandler.cancel_dump_traceback_later()
    return verdicts


_MAIN_SWAP = threading.RLock()  # a worker replaced while others are submitted to


@contextmanager
def bare_main() -> Iterator[None]:
    """While workers are spawned: a `__main__` without a file.

    A spawned worker first runs the parent's `__main__` again, and in a Streamlit server (or AppTest) that is
    the page script being run (Streamlit installs it as `__main__`): the worker would run a page with no
    session and die. The workers need only this package, so they start from a bare `__main__`.
    """
    with _MAIN_SWAP:
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            sys.modules["__main__"] = main
