"""One request and its answer: the call-cache key, the completion, the failure, a run's counters."""

from __future__ import annotations

import email.utils
import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Messages = Sequence[dict[str, str]]


class LLMCallFailed(Exception):
    """A request failed for good: a non-retryable error, or the last of its retries."""

    def __init__(self, message: str, *, kind: str, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind  # rate_limit / server_error / timeout / connection / http_error / bad_response
        self.attempts = attempts
        self.status = status


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

def retry_after(headers: Any) -> float | None:
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


def parse_completion(key: str, response: dict[str, Any], seconds: float) -> Completion:
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
