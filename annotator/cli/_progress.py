"""A tqdm progress bar for a run's progress callback (tqdm is imported when a run starts, not at start-up)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotator.llm import CallStats


@contextmanager
def progress_bar(unit: str, *, show: bool) -> Iterator[Callable[[int, int, CallStats], None]]:
    """A callback `(done, total, stats)` that moves a bar of `unit`s with the run's request counters."""
    from tqdm import tqdm

    bar = tqdm(total=0, unit=unit, disable=not show, dynamic_ncols=True)

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
