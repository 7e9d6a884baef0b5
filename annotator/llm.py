"""One client layer for every OpenAI-compatible endpoint (OpenAI, DeepSeek, vLLM, llama.cpp, Ollama).

- Per role (`extract` = the instruction model M_I, `rewrite` = the reasoning model M_R): model, base URL,
  the NAME of the environment variable holding the API key (the key itself is read when the client is
  built and never stored or logged), temperature (default 0), max tokens, extra body, timeout.
- Bounded concurrency; bounded retries with exponential backoff and jitter on 429 (honouring
  `Retry-After`), 408/409, 5xx, timeouts and connection errors; after the last retry `LLMCallFailed`.
- A persistent call cache (`annotator.models.LLMCall`) keyed by `call_key(model, messages, params)`: a
  repeated call is answered from the database, identical calls in flight are sent once, and a completed
  call is committed before it is handed back, so a killed run never pays for it again.

All database work of a run happens on one thread (`Database`), batched into few short transactions, so
the event loop is free to keep `concurrency` requests in flight.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import heapq
import itertools
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import openai
from sqlalchemy import Engine, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session

from annotator.db import write_session
from annotator.models import LLMCall, utcnow

Messages = Sequence[dict[str, str]]
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, llama.cpp) accept any key; the openai package insists on one.
PLACEHOLDER_API_KEY = "EMPTY"
RETRYABLE_STATUS = frozenset({408, 409, 429})
_LOOKUP_CHUNK = 500


class LLMConfigError(ValueError):
    """A role is configured in a way that cannot work (e.g. no API key for OpenAI's own endpoint)."""


class LLMCallFailed(Exception):
    """A request failed for good: a non-retryable error, or the last of its retries."""

    def __init__(self, message: str, *, kind: str, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind  # rate_limit / server_error / timeout / connection / http_error / bad_response
        self.attempts = attempts
        self.status = status


@dataclass(frozen=True)
class RoleConfig:
    """How to call the model of one role."""

    model: str
    base_url: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    temperature: float = 0.0
    max_tokens: int | None = None
    extra_body: dict[str, Any] | None = None
    timeout: float = 600.0

    def params(self) -> dict[str, Any]:
        """The parameters that change the answer, and so belong in the cache key."""
        params: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    def public(self) -> dict[str, Any]:
        """What a run records about the role: everything but secrets (only the key's variable name)."""
        return asdict(self)

    def api_key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if self.base_url is None and not os.environ.get("OPENAI_BASE_URL"):
            raise LLMConfigError(
                f"the API key variable {self.api_key_env} is not set; set it, or give --base-url for a local server"
            )
        return PLACEHOLDER_API_KEY


def call_key(model: str, messages: Messages, params: dict[str, Any] | str) -> str:
    """SHA-256 over (model, messages, parameters): the identity of a request in the call cache.

    The parts are hashed as length-prefixed strings (no JSON encoding of the long prompt texts, which was
    a fifth of a cached re-run's time), so the key is unique per (model, messages, params) and the same in
    every process. `params` may be given as `params_json(params)` already. Format "v2": caches written with
    the earlier JSON-based key are cold.
    """
    parts = [model, params if isinstance(params, str) else params_json(params), str(len(messages))]
    for message in messages:
        parts.append(str(len(message)))
        for name in sorted(message):
            value = message[name]
            # Text as it is; anything else (e.g. a list of content parts) as JSON, marked so it cannot equal text.
            parts += (name, value if isinstance(value, str) else "\0json:" + params_json(value))
    payload = "annotator-call-key/v2" + "".join(f"{len(part)}:{part}" for part in parts)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def params_json(value: Any) -> str:
    """Canonical JSON of request parameters, as hashed into `call_key`."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Completion:
    key: str
    content: str
    reasoning_content: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False

    def record(self) -> dict[str, Any]:
        """The raw response as kept on a candidate."""
        out: dict[str, Any] = {"content": self.content, "key": self.key}
        if self.reasoning_content:
            out["reasoning_content"] = self.reasoning_content
        if self.finish_reason:
            out["finish_reason"] = self.finish_reason
        return out


@dataclass
class CallStats:
    """Counters for one run; touched only from the event loop."""

    requests: int = 0  # HTTP requests sent, retries included
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0  # calls that failed for good
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    retry_reasons: Counter[str] = field(default_factory=Counter)  # e.g. {"rate_limit": 3, "timeout": 1}
    retry_delays: list[float] = field(default_factory=list)  # seconds waited before each retry

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests, "cache_hits": self.cache_hits, "retries": self.retries,
            "failures": self.failures, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
        }


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


def insert_ignore(session: Session, table: Any, rows: Iterable[dict[str, Any]]) -> None:
    """INSERT rows in one executemany, skipping those whose key exists (SQLite and PostgreSQL)."""
    rows = list(rows)
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    session.execute(insert(table).on_conflict_do_nothing(), rows)


def _retry_after(headers: Any) -> float | None:
    """Seconds from `Retry-After` (seconds or HTTP date) or `retry-after-ms`, if the server sent one."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _reasoning(message: dict[str, Any]) -> str | None:
    """`reasoning_content` (DeepSeek, vLLM) or `reasoning` (newer vLLM, Ollama), when the server sends it."""
    for name in ("reasoning_content", "reasoning"):
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return None


class LLMClient:
    """Async, cached, bounded-concurrency chat completions for the roles of a run.

    Args:
        db: the run's `Database`.
        roles: role name -> `RoleConfig`.
        concurrency: requests in flight at most, over all roles.
        max_retries: retries after the first attempt for retryable errors.
        backoff_base: first backoff in seconds; doubled per retry, with jitter, capped at `backoff_max`.
        run_id: recorded on the cache rows this client creates.
    """

    def __init__(
        self,
        *,
        db: Database,
        roles: dict[str, RoleConfig],
        concurrency: int = 8,
        max_retries: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        run_id: int | None = None,
        stats: CallStats | None = None,
    ) -> None:
        if concurrency < 1:
            raise LLMConfigError("concurrency must be at least 1")
        self.db = db
        self.roles = roles
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.run_id = run_id
        self.stats = stats or CallStats()
        self._slots = PrioritySlots(concurrency)
        self._clients: dict[tuple[str | None, str], list[openai.AsyncOpenAI]] = {}
        # httpx's connection pool scans every pooled connection on each request; several small pools
        # (about 4 connections each) instead of one big one keep that cost flat as concurrency grows.
        self._pools = max(1, min(16, -(-concurrency // 4)))
        self._turn = itertools.count()
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._stored: set[str] = set()  # keys this client answered over HTTP and committed to the cache
        self._params = {role: params_json(config.params()) for role, config in roles.items()}
        for config in roles.values():
            config.api_key()  # fail early on a missing key; clients are built on the first request

    def _client(self, config: RoleConfig) -> openai.AsyncOpenAI:
        slot = (config.base_url, config.api_key_env)
        clients = self._clients.setdefault(slot, [])
        turn = next(self._turn) % self._pools
        if turn >= len(clients):
            # Retries are ours (counted, bounded, Retry-After honoured), so the package's are off.
            clients.append(openai.AsyncOpenAI(
                base_url=config.base_url, api_key=config.api_key(), max_retries=0, timeout=config.timeout
            ))
            return clients[-1]
        return clients[turn]

    def key(self, role: str, messages: Messages) -> str:
        return call_key(self.roles[role].model, messages, self._params[role])

    async def complete(self, role: str, messages: Messages, *, priority: float = 0) -> Completion:
        """The model's answer to `messages`, from the cache if it was asked before.

        Requests with a lower `priority` get a free slot first.

        Raises:
            LLMCallFailed: after the last retry, or on an error retrying cannot fix.
        """
        config = self.roles[role]
        key = call_key(config.model, messages, self._params[role])
        pending = self._inflight.get(key)
        if pending is None:
            # A cache hit is answered in this coroutine (one batched lookup, no task of its own).
            cached = await self.db.cached_call(key)
            if cached is None and key in self._stored:  # stored by us after the lookup's query ran
                cached = await self.db.cached_call(key)
            if cached is not None:
                self.stats.cache_hits += 1
                return Completion(
                    key=key, content=cached["content"] or "", reasoning_content=cached["reasoning_content"],
                    finish_reason=cached["finish_reason"], prompt_tokens=cached["prompt_tokens"] or 0,
                    completion_tokens=cached["completion_tokens"] or 0, cached=True,
                )
            pending = self._inflight.get(key)  # an identical call may have started while we looked
            if pending is None:
                pending = asyncio.ensure_future(self._complete(key, config, messages, priority))
                self._inflight[key] = pending
                pending.add_done_callback(lambda _f, k=key: self._inflight.pop(k, None))
        return await asyncio.shield(pending)

    async def _complete(self, key: str, config: RoleConfig, messages: Messages, priority: float) -> Completion:
        """Ask the endpoint (the cache said no), then commit the answer to the cache before handing it back."""
        try:
            completion = await self._request(key, config, messages, priority)
        except LLMCallFailed as exc:
            self.stats.failures += 1
            self.stats.errors.append(str(exc))
            raise
        self.stats.prompt_tokens += completion.prompt_tokens
        self.stats.completion_tokens += completion.completion_tokens
        row = {
            "key": key, "model": config.model, "request": {"messages": list(messages), "params": config.params()},
            "content": completion.content, "reasoning_content": completion.reasoning_content,
            "finish_reason": completion.finish_reason, "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens, "seconds": completion.seconds,
            "run_id": self.run_id, "created_at": utcnow(),
        }
        await self.db.store_call(row)
        self._stored.add(key)
        return completion

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.backoff_max, self.backoff_base * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    async def _request(self, key: str, config: RoleConfig, messages: Messages, priority: float) -> Completion:
        client = self._client(config)
        body: dict[str, Any] = {
            **(config.extra_body or {}), "model": config.model, "messages": list(messages),
            "temperature": config.temperature,
        }
        if config.max_tokens is not None:
            body["max_tokens"] = config.max_tokens
        attempt = 0
        while True:
            delay: float | None = None
            await self._slots.acquire(priority)
            try:
                self.stats.requests += 1
                started = time.perf_counter()
                try:
                    # `post` with `cast_to=object` is the package's documented way to call an endpoint raw:
                    # same errors, retries-off and timeout handling as `chat.completions.create`, without
                    # building pydantic models both ways (a third of the client's CPU time per request).
                    response = await client.post(
                        "/chat/completions", body=body, cast_to=object, options={"timeout": config.timeout}
                    )
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    kind = "rate_limit" if status == 429 else "server_error" if status >= 500 else "http_error"
                    if not (status in RETRYABLE_STATUS or status >= 500) or attempt >= self.max_retries:
                        raise LLMCallFailed(
                            f"{config.model}: HTTP {status} after {attempt + 1} attempt(s): {_short(exc)}",
                            kind=kind, attempts=attempt + 1, status=status,
                        ) from exc
                    reason = kind
                    delay = _retry_after(exc.response.headers)
                    if delay is not None:
                        delay = min(delay, self.backoff_max)
                except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                    kind = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection"
                    reason = f"{kind}: {_short(exc, 80)}"
                    if attempt >= self.max_retries:
                        raise LLMCallFailed(
                            f"{config.model}: {kind} after {attempt + 1} attempt(s): {_short(exc)}",
                            kind=kind, attempts=attempt + 1,
                        ) from exc
                except (openai.APIError, ValueError) as exc:  # a 200 whose body is not JSON / a completion
                    raise LLMCallFailed(
                        f"{config.model}: bad response: {_short(exc)}", kind="bad_response", attempts=attempt + 1
                    ) from exc
                else:
                    if not isinstance(response, dict):
                        raise LLMCallFailed(
                            f"{config.model}: bad response: not a JSON object: {_short(repr(response))}",
                            kind="bad_response", attempts=attempt + 1,
                        )
                    return _completion(key, response, time.perf_counter() - started)
            finally:
                self._slots.release()
            self.stats.retries += 1
            self.stats.retry_reasons[reason] += 1
            delay = self._backoff(attempt) if delay is None else delay
            self.stats.retry_delays.append(delay)
            await asyncio.sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        for clients in self._clients.values():
            for client in clients:
                await client.close()


def _short(exc: BaseException | str, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _completion(key: str, response: dict[str, Any], seconds: float) -> Completion:
    """A chat-completion JSON body -> Completion; missing parts become empty (and then unparseable)."""
    choices = response.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    content = message.get("content")
    return Completion(
        key=key,
        content=content if isinstance(content, str) else "",
        reasoning_content=_reasoning(message),
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens") or 0,
        completion_tokens=usage.get("completion_tokens") or 0,
        seconds=seconds,
    )
