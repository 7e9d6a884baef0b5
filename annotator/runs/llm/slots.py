"""Request slots that go to the most urgent waiter first."""

from __future__ import annotations

import asyncio
import heapq
import itertools


class PrioritySlots:
    """A semaphore that hands a free slot to the waiter with the lowest priority first (FIFO among equals).

    The pipeline gives each problem's requests the problem's rank, so early problems finish first: their
    candidates are written early and steadily instead of all problems finishing together at the end.
    """

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiters: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: float = 0) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as we were cancelled: pass it on
            raise

    def release(self) -> None:
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():  # skip waiters that were cancelled
                future.set_result(None)
                return
        self._free += 1
