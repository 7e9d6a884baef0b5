"""How to call the model of one role: model, endpoint, the NAME of the API-key variable, parameters."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from annotator._util.urls import url_problem

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, llama.cpp) accept any key; the openai package insists on one.
PLACEHOLDER_API_KEY = "EMPTY"


class LLMConfigError(ValueError):
    """A role is configured in a way that cannot work (e.g. no API key for OpenAI's own endpoint)."""


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

    def check(self) -> None:
        """Raise LLMConfigError if a number is out of its range (`annotator.settings.limits`), the URL is not http(s) or
        the model's name is no name (`annotator.database.names`: it is stored with every answer and verdict)."""
        from annotator.database import names
        from annotator.settings import limits

        if (why := names.problem(self.model)) is not None:
            raise LLMConfigError(f"model {names.shown(self.model)} {why}")

        limits.check_each({
            "temperature": (self.temperature, limits.TEMPERATURE), "max_tokens": (self.max_tokens, limits.MAX_TOKENS),
            "timeout": (self.timeout, limits.TIMEOUT),
        }, error=LLMConfigError)
        if self.base_url is not None and (problem := url_problem(self.base_url)):
            raise LLMConfigError(f"base URL {self.base_url[:80]!r} {problem}")

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
