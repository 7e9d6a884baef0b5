"""A tqdm progress bar for a run's progress callback (tqdm is imported when a run starts, not at start-up), or,
without one (`--no-progress`: a background run, whose output is its log file), a plain line now and then."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotator.runs.llm import CallStats


@contextmanager
def progress_bar(unit: str, *, show: bool) -> Iterator[Callable[[int, int, CallStats], None]]:
    """A callback `(done, total, stats)` that moves a bar of `unit`s with the run's request counters; with
    `show` False it writes a line (the first item, then at most every `LOG_SECONDS`, and the last)."""
    if not show:
        yield log_lines(unit)
        return
    from tqdm import tqdm

    bar = tqdm(total=0, unit=unit, dynamic_ncols=True)

    def on_progress(done: int, total: int, stats: CallStats) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.set_postfix(req=stats.requests, cached=stats.cache_hits, failed=stats.failures, refresh=False)
        bar.refresh()

    try:
        yield on_progress
    finally:
        bar.close()


LOG_SECONDS = 5.0


def log_lines(unit: str) -> Callable[[int, int, CallStats], None]:
    last = [float("-inf")]

    def on_progress(done: int, total: int, stats: CallStats) -> None:
        now = time.monotonic()
        if done in (1, total) or now - last[0] >= LOG_SECONDS:
            last[0] = now
            print(f"{done}/{total} {unit}s done, {stats.requests} requests sent, {stats.cache_hits} answered from "
                  f"cache, {stats.failures} failed", file=sys.stdout, flush=True)

    return on_progress
