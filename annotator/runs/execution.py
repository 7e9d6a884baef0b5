"""What a run's process does for any kind of run: work through the items with a number of workers, beat
the heart, stop when asked, and say how it ended."""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.database.vocabulary import RunStatus
from annotator.runs.lifecycle import handing_back, worker_id
from annotator.runs.progress import RunProgress

Item = TypeVar("Item")
Progress = TypeVar("Progress", bound=RunProgress)


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
    start if `cancelled`, the workers are cancelled. Once the run is being handed back (`hand_back`), they take no
    more items and end when their current one has.
    """
    queue = deque(items)

    async def worker() -> None:
        while queue and not handing_back():
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
    run's database thread (`db`, an `annotator.runs.llm.Database`) and write the outcome with the final counters.

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
        status, message = _handed_back(progress, *await work(client))
    except BaseException as exc:
        status, message = interrupted(exc)
        raise
    finally:
        await client.aclose()
        db.close()
        _write_outcome(engine, progress, status, message)
    return status


def _handed_back(progress: RunProgress, status: RunStatus, message: str | None) -> tuple[RunStatus, str | None]:
    """A run that stopped short because it is being handed back (`hand_back`) goes back to the queue."""
    if handing_back() and status in (RunStatus.succeeded, RunStatus.partial) and progress.done < progress.total:
        return RunStatus.queued, f"handed back by {worker_id()} ({progress.done} of {progress.total} done)"
    return status, message


async def run_requests(
    engine: Engine,
    *,
    run_id: int,
    claim: Callable[[Engine, int], tuple[Any, bool, Sequence[Any], Progress]],
    handler: Callable[[Any, Any, Any, Progress], Callable[[Any], Awaitable[None]]],
    poll_seconds: float,
) -> tuple[Progress, RunStatus]:
    """Queued run `run_id` of one request per item (evaluate, judge) to its end; returns its progress and status.

    `claim(engine, run_id)` marks it running and gives (options, cancel requested, items, progress); its client is
    built from the options (`roles()`, `concurrency`, `max_retries`, `backoff_base`), each item is handled by
    `handler(client, db, options, progress)`, and the outcome (items that failed, or whose answer was unreadable,
    make it partial) is written by `run_to_end`.
    """
    from annotator.runs.llm import Database, LLMClient  # the client (and openai) only in a run's process

    with short_switch_interval():
        options, cancelled, items, progress = claim(engine, run_id)
        db = Database(engine)

        def open_client() -> LLMClient:
            return LLMClient(
                db=db, roles=options.roles(), concurrency=options.concurrency, max_retries=options.max_retries,
                backoff_base=options.backoff_base, run_id=run_id, stats=progress.stats,
            )

        async def work(client: LLMClient) -> tuple[RunStatus, str | None]:
            outcomes = await work_through(
                items, handler(client, db, options, progress),
                # Twice the slots, so an item whose answer is being stored never leaves a slot idle.
                workers=max(2, options.concurrency * 2),
                heartbeat=lambda: db.write(progress.save), poll_seconds=poll_seconds, cancelled=cancelled,
            )
            return outcome(outcomes, cancelled=cancelled, failures=progress.failures + progress.unparseable)

        return progress, await run_to_end(engine, progress=progress, db=db, open_client=open_client, work=work)


@dataclass
class ItemHandler:
    """What handles the items of a run of requests (a kind subclasses it with `__call__(item)`): the run's client
    and database thread (`annotator.runs.llm`), its options and progress, and who wants to hear of each item done."""

    client: Any
    db: Any
    options: Any
    progress: Any
    progress_callback: Callable[[int, int, Any], None] | None = None

    def item_done(self) -> None:
        self.progress.done += 1
        if self.progress_callback is not None:
            self.progress_callback(self.progress.done, self.progress.total, self.progress.stats)


def request_run(
    claim: Callable[[Engine, int], tuple[Any, bool, Sequence[Any], Any]],
    handler: type[ItemHandler],
    *,
    after: Callable[[Engine, Any], None] | None = None,
) -> Callable[..., Awaitable[Any]]:
    """A kind's `execute` for runs of one request per item (`run_requests`), whose items `handler` (an
    `ItemHandler`) handles; `after(engine, progress)`, if given, runs in a thread once the run has
    ended (evaluate judges what it collected). The returned coroutine function gives the progress's summary."""
    # `handler(client, db, options, progress, progress_callback)` handles an item.

    async def execute(
        engine: Engine, *, run_id: int, progress_callback: Callable[..., None] | None = None,
        poll_seconds: float = 1.0,
    ) -> Any:
        started = time.perf_counter()
        progress, status = await run_requests(
            engine, run_id=run_id, claim=claim, poll_seconds=poll_seconds,
            handler=lambda client, db, options, progress: handler(client, db, options, progress, progress_callback),
        )
        if after is not None:
            await asyncio.to_thread(after, engine, progress)
        return progress.summary(status, time.perf_counter() - started)

    return execute
