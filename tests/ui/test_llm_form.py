"""The shared LLM connection form's answer: the roles it builds, and what it says when a model is not named.
(The form drawn on a page is tested with the Generate and Evaluate pages, by label in the browser tests.)"""

from __future__ import annotations

import pytest

from annotator.runs import RunError
from annotator.runs.llm import DEFAULT_API_KEY_ENV, RoleConfig
from ui.llm_form import Connection


def _connection(models: dict[str, str], **values: object) -> Connection:
    fields = {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "K", "concurrency": 3, "max_tokens": None}
    return Connection(models=models, **{**fields, **values})  # type: ignore[arg-type]


def test_each_model_gets_the_shared_endpoint_and_the_role_defaults_where_the_form_did_not_ask() -> None:
    connection = _connection({"extract_model": "m-i", "rewrite_model": "m-r"}, max_tokens=64)
    assert connection.role("rewrite_model") == RoleConfig(
        model="m-r", base_url="http://127.0.0.1:9/v1", api_key_env="K", max_tokens=64)
    assert connection.role("extract_model").temperature == RoleConfig(model="x").temperature
    assert _connection({"model": "m"}, temperature=0.7).role("model").temperature == 0.7
    assert DEFAULT_API_KEY_ENV == RoleConfig(model="x").api_key_env


@pytest.mark.parametrize(("models", "message"), [
    ({"model": ""}, "name the model"),
    ({"extract_model": "m-i", "rewrite_model": ""}, "name both models"),
    ({"a": "x", "b": "y", "c": ""}, "name every model"),
])
def test_a_model_not_named_is_refused_with_what_to_fix(models: dict[str, str], message: str) -> None:
    connection = _connection(models)
    for key in models:
        with pytest.raises(RunError, match=f"^{message}$"):
            connection.role(key)
