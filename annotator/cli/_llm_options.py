"""The command-line options every LLM run takes (`generate`, `evaluate`): endpoint, key variable, retries, run."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from annotator._util.urls import url_problem  # not through `runs.llm`, whose package loads the openai client
from annotator.cli._app import bounded, fail
from annotator.settings import limits

# The default of `annotator.runs.llm.DEFAULT_API_KEY_ENV`, written out so that `--help` needs no client (a test
# keeps them equal).
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


def check_url(value: str | None) -> str | None:
    if value is not None and (problem := url_problem(value)):
        raise typer.BadParameter(f"{value[:80]!r} {problem}")
    return value


BaseUrl = Annotated[
    str | None,
    typer.Option(
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (default: OpenAI).", callback=check_url
    ),
]
ApiKeyEnv = Annotated[
    str, typer.Option(help="NAME of the environment variable holding the API key (the key is never stored).")
]
Concurrency = Annotated[int, typer.Option(help="Requests in flight at most.", **bounded(limits.CONCURRENCY))]
MaxTokens = Annotated[int | None, typer.Option(help="Max tokens per answer.", **bounded(limits.MAX_TOKENS))]
Timeout = Annotated[
    float, typer.Option(help="Seconds per request before it is retried.", **bounded(limits.TIMEOUT))
]
MaxRetries = Annotated[
    int,
    typer.Option(help="Retries per request on 429, 5xx, timeouts, dropped connections.", **bounded(limits.MAX_RETRIES)),
]
Backoff = Annotated[
    float, typer.Option(help="First retry delay in seconds (doubles, with jitter).", **bounded(limits.BACKOFF))
]
RunId = Annotated[
    int | None,
    typer.Option(
        help="Execute this queued run (created by the app) with its stored options.", **bounded(limits.RUN_ID)
    ),
]
Queue = Annotated[
    bool, typer.Option("--queue", help="Only queue the run and print its id; a worker executes it.")
]
Progress = Annotated[bool, typer.Option(help="Show a progress bar (without: a line now and then, for a log).")]


def role(model: str | None, *, missing: str, **settings: Any) -> Any:
    """The `RoleConfig` of a run's one model from the command's options (`settings`: base_url, api_key_env,
    temperature, max_tokens, timeout); exits 2 saying `missing` when no model was given."""
    from annotator.database import names
    from annotator.runs.llm import RoleConfig

    if not model:
        fail(missing, 2)
    try:
        names.check(model, what="--model")
    except names.BadName as exc:
        fail(str(exc), 2)
    return RoleConfig(model=model, **settings)
