"""`LLMClient`: cached, bounded-concurrency, retrying chat completions against an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from typing import Any

import openai

from annotator.database.models import utcnow
from annotator.runs.llm.calls import (
    CallStats,
    Completion,
    LLMCallFailed,
    Messages,
    call_key,
    params_json,
    parse_completion,
    retry_after,
)
from annotator.runs.llm.config import LLMConfigError, RoleConfig
from annotator.runs.llm.database import Database
from annotator.runs.llm.slots import PrioritySlots

RETRYABLE_STATUS = frozenset({408, 409, 429})


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
                except (openai.APIError, ValueError) as exc:  # ValueError: a 200 whose body is not JSON
                    reason, delay = self._retry_or_raise(exc, config, attempt)
                else:
                    if not isinstance(response, dict):
                        raise LLMCallFailed(
                            f"{config.model}: bad response: not a JSON object: {_short(repr(response))}",
                            kind="bad_response", attempts=attempt + 1,
                        )
                    return parse_completion(key, response, time.perf_counter() - started)
            finally:
                self._slots.release()
            self.stats.retries += 1
            self.stats.retry_reasons[reason] += 1
            delay = self._backoff(attempt) if delay is None else delay
            self.stats.retry_delays.append(delay)
            await asyncio.sleep(delay)
            attempt += 1

    def _retry_or_raise(self, exc: Exception, config: RoleConfig, attempt: int) -> tuple[str, float | None]:
        """Why a failed request is tried again and after how long (None: back off), or `LLMCallFailed` when it is
        not: a status that is no server error or rate limit, no attempts left, or a bad response."""
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            kind = "rate_limit" if status == 429 else "server_error" if status >= 500 else "http_error"
            if not (status in RETRYABLE_STATUS or status >= 500) or attempt >= self.max_retries:
                raise LLMCallFailed(
                    f"{config.model}: HTTP {status} after {attempt + 1} attempt(s): {_short(exc)}",
                    kind=kind, attempts=attempt + 1, status=status,
                ) from exc
            delay = retry_after(exc.response.headers)
            return kind, None if delay is None else min(delay, self.backoff_max)
        if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
            kind = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection"
            if attempt >= self.max_retries:
                raise LLMCallFailed(
                    f"{config.model}: {kind} after {attempt + 1} attempt(s): {_short(exc)}",
                    kind=kind, attempts=attempt + 1,
                ) from exc
            return f"{kind}: {_short(exc, 80)}", None
        # Any other API error, or a 200 whose body is not a completion.
        raise LLMCallFailed(
            f"{config.model}: bad response: {_short(exc)}", kind="bad_response", attempts=attempt + 1
        ) from exc

    async def aclose(self) -> None:
        for clients in self._clients.values():
            for client in clients:
                await client.close()


def _short(exc: BaseException | str, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
