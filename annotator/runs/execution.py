"""What a run's process does for any kind of run: work through the items with a number of workers, beat
the heart, stop when asked, and say how it ended."""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from sqlalchemy import Engine

from annotator.db import write_session
from annotator.runs.progress import RunProgress
from annotator.vocabulary import RunStatus

Item = TypeVar("Item")


class _Client(Protocol):
    async def aclose(self) -> None: ...


Client = TypeVar("Client", bound=_Client)


@contextmanager
def short_switch_interval(seconds: float = 0.0005) -> Iterator[None]:
    """Shorter GIL slices while a run lasts.

    Database work runs on its own thread; with the default 5 ms switch interval every hand-off to it can
    stall that long, which is most of a cached re-run's time.
    """
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, seconds))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


async def work_through(
    items: Sequence[Item],
    handle: Callable[[Item], Awaitable[None]],
    *,
    workers: int,
    heartbeat: Callable[[], Awaitable[bool]],
    poll_seconds: float,
    cancelled: bool = False,
) -> list[BaseException | None]:
    """`handle` every item, `workers` at a time, in order; returns each worker's outcome.

    `heartbeat()` runs every `poll_seconds` (it saves the counters); once it returns True, or from the
    start if `cancelled`, the workers are cancelled.
    """
    queue = deque(items)

    async def worker() -> None:
        while queue:
            await handle(queue.popleft())

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]

    async def watch() -> None:
        while True:
            await asyncio.sleep(poll_seconds)
            if await heartbeat():
                for task in tasks:
                    task.cancel()
                return

    watcher = asyncio.create_task(watch())
    try:
        if cancelled:
            for task in tasks:
                task.cancel()
        return list(await asyncio.gather(*tasks, return_exceptions=True))
    finally:
        watcher.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(watcher, *tasks, return_exceptions=True)


def outcome(
    outcomes: Sequence[BaseException | None], *, cancelled: bool, failures: int
) -> tuple[RunStatus, str | None]:
    """How a run ended, from its workers' outcomes: a crash fails it, a cancel request cancels it, items
    that failed after their retries make it partial."""
    crashed = [o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, asyncio.CancelledError)]
    if crashed:
        return RunStatus.failed, f"{type(crashed[0]).__name__}: {crashed[0]}"
    if cancelled or any(isinstance(o, asyncio.CancelledError) for o in outcomes):
        return RunStatus.cancelled, "cancelled on request"
    return (RunStatus.partial if failures else RunStatus.succeeded), None


def interrupted(exc: BaseException) -> tuple[RunStatus, str]:
    """How a run ended that was interrupted from outside (KeyboardInterrupt / SystemExit in the CLI)."""
    stopped = isinstance(exc, KeyboardInterrupt | asyncio.CancelledError)
    return (RunStatus.cancelled if stopped else RunStatus.failed), repr(exc)


def _write_outcome(engine: Engine, progress: RunProgress, status: RunStatus, message: str | None) -> None:
    with write_session(engine) as session:
        progress.finish(session, status=status, message=message)


async def run_to_end(
    engine: Engine,
    *,
    progress: RunProgress,
    db: Any,
    open_client: Callable[[], Client],
    work: Callable[[Client], Awaitable[tuple[RunStatus, str | None]]],
) -> RunStatus:
    """A claimed run's body: open its client, `work` with it, and whatever happens close the client and the
    run's database thread (`db`, an `annotator.llm.Database`) and write the outcome with the final counters.

    A client that cannot be built (e.g. no API key) fails the run; an interrupt (KeyboardInterrupt /
    SystemExit in the CLI) is recorded, then re-raised.
    """
    try:
        client = open_client()
    except Exception as exc:
        db.close()
        _write_outcome(engine, progress, RunStatus.failed, str(exc))
        raise
    status, message = RunStatus.running, None
    try:
        status, message = await work(client)
    except BaseException as exc:
        status, message = interrupted(exc)
        raise
    finally:
        await client.aclose()
        db.close()
        _write_outcome(engine, progress, status, message)
    return status
