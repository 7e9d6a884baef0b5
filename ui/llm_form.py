"""The LLM connection part of a page's run form (Generate, Evaluate, and every kind of run to come): the model or
models, the endpoint, the key's variable, requests at once, the answer's length and, where the kind asks for it,
the temperature. Drawn inside the page's `st.form`, with the same labels and widget keys on every page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from annotator.runs import RunError
from annotator.runs.llm import DEFAULT_API_KEY_ENV, RoleConfig
from annotator.settings import limits

KEY_HELP = "The NAME of an environment variable of the server process; the key is never stored."


@dataclass(frozen=True)
class ModelField:
    """One model the run calls: its widget key, label and example name."""

    key: str
    label: str
    placeholder: str


@dataclass(frozen=True)
class Connection:
    """What the form says about calling the models: `models` maps each field's key to the name typed."""

    models: dict[str, str]
    base_url: str | None
    api_key_env: str
    concurrency: int
    max_tokens: int | None
    temperature: float | None = None  # None: the form did not ask (the role's default)

    def role(self, key: str) -> RoleConfig:
        """How to call the model of field `key`; RunError when a model is not named (the page shows it)."""
        if not all(self.models.values()):
            raise RunError({1: "name the model", 2: "name both models"}.get(len(self.models), "name every model"))
        settings: dict[str, Any] = {"base_url": self.base_url, "api_key_env": self.api_key_env,
                                    "max_tokens": self.max_tokens}
        if self.temperature is not None:
            settings["temperature"] = self.temperature
        return RoleConfig(model=self.models[key], **settings)


def _pairs(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i:i + 2] for i in range(0, len(items), 2)]


def connection(models: Sequence[ModelField], *, temperature: bool = False) -> Connection:
    """Draw the connection fields, two a row: the models (and the temperature), the base URL and the key's
    variable, concurrency and max tokens; what they say."""
    typed: dict[str, str] = {}
    fields: list[Any] = [*models, "temperature"] if temperature else list(models)
    chosen_temperature = None
    for pair in _pairs(fields):
        for column, field in zip(st.columns(2), pair):
            if isinstance(field, ModelField):
                typed[field.key] = column.text_input(field.label, placeholder=field.placeholder, key=field.key).strip()
            else:
                chosen_temperature = float(column.number_input(
                    "Temperature", min_value=float(limits.TEMPERATURE.low), max_value=float(limits.TEMPERATURE.high),
                    value=0.0, step=0.1, key="temperature"))
    left, right = st.columns(2)
    base_url = left.text_input("Base URL (empty = OpenAI)", placeholder="http://127.0.0.1:8000/v1", key="base_url")
    api_key_env = right.text_input("API key variable", value=DEFAULT_API_KEY_ENV, key="api_key_env", help=KEY_HELP)
    left, right = st.columns(2)
    concurrency = left.number_input("Concurrency", min_value=limits.CONCURRENCY.low, max_value=limits.CONCURRENCY.high,
                                    value=8, key="concurrency")
    max_tokens = right.number_input("Max tokens per answer (0 = server default)", min_value=0, value=0,
                                    key="max_tokens")
    return Connection(
        models=typed, base_url=base_url.strip() or None, api_key_env=api_key_env.strip() or DEFAULT_API_KEY_ENV,
        concurrency=int(concurrency), max_tokens=int(max_tokens) or None, temperature=chosen_temperature,
    )
