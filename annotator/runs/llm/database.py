"""A run's database work on one thread: call-cache lookups batched into IN-queries, writes into group commits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotator.database.engine import insert_ignore, write_session
from annotator.database.models import LLMCall

_LOOKUP_CHUNK = 500


class Database:
    """Runs a run's database work on one thread: reads batched into IN-queries, writes into group commits.

    `write(fn)` and `store_call(row)` return once the transaction holding them has committed. Writes queued
    while a commit is running go into the next transaction together (the call-cache rows as one
    executemany); if a batch fails, its items are retried one by one so a bad item cannot take the others
    down with it.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="annotator-db")
        self._writes: list[tuple[Callable[[Session], Any] | dict[str, Any], asyncio.Future[Any]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._lookups: dict[str, list[asyncio.Future[dict[str, Any] | None]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run `fn(*args)` on the database thread."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def write(self, fn: Callable[[Session], Any]) -> Any:
        """Run `fn(session)` in a write transaction; returns its result once committed."""
        return await self._queue(fn)

    async def store_call(self, row: dict[str, Any]) -> None:
        """Add a completed call to the cache (kept if the key is there already)."""
        await self._queue(row)

    async def _queue(self, item: Callable[[Session], Any] | dict[str, Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._writes.append((item, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_loop())
        return await future

    async def _write_loop(self) -> None:
        while self._writes:
            batch, self._writes = self._writes, []
            try:
                results = await self.run(self._commit, [item for item, _ in batch])
            except BaseException as exc:  # noqa: BLE001  (e.g. the executor shut down): tell every waiter
                results = [(False, exc)] * len(batch)
            for (_, future), (ok, value) in zip(batch, results, strict=True):
                if future.done():
                    continue
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    @staticmethod
    def _apply(session: Session, items: list[Callable[[Session], Any] | dict[str, Any]]) -> list[tuple[bool, Any]]:
        calls = [item for item in items if isinstance(item, dict)]
        insert_ignore(session, LLMCall, calls)
        return [(True, None if isinstance(item, dict) else item(session)) for item in items]

    def _commit(self, items: list[Callable[[Session], Any] | dict[str, Any]]) -> list[tuple[bool, Any]]:
        try:
            with write_session(self.engine) as session:
                return self._apply(session, items)
        except Exception as exc:  # noqa: BLE001  (handed to the callers)
            if len(items) == 1:
                return [(False, exc)]
        results: list[tuple[bool, Any]] = []
        for item in items:
            try:
                with write_session(self.engine) as session:
                    results.extend(self._apply(session, [item]))
            except Exception as exc:  # noqa: BLE001
                results.append((False, exc))
        return results

    async def cached_call(self, key: str) -> dict[str, Any] | None:
        """The cached response for `key`, or None; lookups made in the same loop turn share one query."""
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._lookups.setdefault(key, []).append(future)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._lookup_loop())
        return await future

    async def _lookup_loop(self) -> None:
        await asyncio.sleep(0)  # let the other coroutines of this loop turn queue their keys
        while self._lookups:
            batch, self._lookups = self._lookups, {}
            try:
                found = await self.run(self._fetch_calls, list(batch))
            except Exception as exc:  # noqa: BLE001
                for futures in batch.values():
                    for future in futures:
                        if not future.done():
                            future.set_exception(exc)
                continue
            for key, futures in batch.items():
                for future in futures:
                    if not future.done():
                        future.set_result(found.get(key))

    def _fetch_calls(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        columns = (LLMCall.key, LLMCall.content, LLMCall.reasoning_content, LLMCall.finish_reason,
                   LLMCall.prompt_tokens, LLMCall.completion_tokens)
        found: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = keys[start:start + _LOOKUP_CHUNK]
                for row in conn.execute(select(*columns).where(LLMCall.key.in_(chunk))):
                    found[row.key] = row._asdict()
        return found

    def close(self) -> None:
        self._executor.shutdown(wait=True)
