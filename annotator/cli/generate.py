"""`python -m annotator generate`: ReliableMath construction Steps 1-2 against an OpenAI-compatible endpoint.

The pipeline, the client (and with it `openai`, 0.6 s to import) and tqdm are imported when the command
runs, not when the command line starts.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator.cli import _llm_options as llm
from annotator.cli._app import app, bounded, fail
from annotator.cli._runs import create_and_execute
from annotator.database.vocabulary import RunKind
from annotator.settings import limits

# The default of `annotator.construction.pipeline.DEFAULT_VERSION`, written out so that `--help` needs no pipeline (a
# test keeps them equal).
DEFAULT_PROMPT_VERSION = "v1"


def _steps(value: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError:
        fail(f"--steps takes 1, 2 or 1,2; got {value!r}", 2)
        raise


def _json_object(option: str, value: str | None) -> dict[str, Any] | None:
    if not value:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        fail(f"{option} is not JSON: {exc}", 2)
    if not isinstance(parsed, dict):
        fail(f"{option} must be a JSON object", 2)
    return parsed


@app.command()
def generate(
    extract_model: Annotated[
        str | None, typer.Option(help="Instruction model M_I: condition extraction and verification.")
    ] = None,
    rewrite_model: Annotated[
        str | None, typer.Option(help="Reasoning model M_R: rewriting, unsolvable analysis and reason.")
    ] = None,
    source: Annotated[str | None, typer.Option(help="Only problems of this data source (e.g. aime).")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many problems.", **bounded(limits.LIMIT))] = None,
    base_url: llm.BaseUrl = None,
    api_key_env: llm.ApiKeyEnv = llm.DEFAULT_API_KEY_ENV,
    rewrite_base_url: Annotated[
        str | None, typer.Option(help="Base URL for M_R if it differs.", callback=llm.check_url)
    ] = None,
    rewrite_api_key_env: Annotated[str | None, typer.Option(help="API key variable for M_R if it differs.")] = None,
    concurrency: llm.Concurrency = 8,
    steps: Annotated[
        str, typer.Option(help="1 (extract + rewrite; candidates wait as unverified), 2 (verify them), or 1,2.")
    ] = "1,2",
    prompt_version: Annotated[
        str, typer.Option(help="Folder under annotator/construction/pipeline/prompts/.")
    ] = DEFAULT_PROMPT_VERSION,
    temperature: Annotated[
        float, typer.Option(help="Sampling temperature for both models.", **bounded(limits.TEMPERATURE))
    ] = 0.0,
    max_tokens: llm.MaxTokens = None,
    extra_body: Annotated[
        str | None, typer.Option(help='JSON object sent with every request, e.g. \'{"top_k": 20}\'.')
    ] = None,
    timeout: llm.Timeout = 600.0,
    max_retries: llm.MaxRetries = 5,
    backoff: llm.Backoff = 1.0,
    rewrite_types: Annotated[str, typer.Option(help="remove, contradict or both.")] = "remove,contradict",
    max_conditions: Annotated[
        int | None,
        typer.Option(help="Rewrite at most this many extracted conditions per problem (default: all; the paper's "
                     "prompt asks for 1-3, its release has up to 6).", **bounded(limits.MAX_CONDITIONS)),
    ] = None,
    run_id: llm.RunId = None,
    queue: llm.Queue = False,
    progress: llm.Progress = True,
) -> None:
    """Extract conditions, rewrite (remove / contradict) and verify: LLM-proposed candidates to label.

    Completed requests are cached in the database: a killed or cancelled run started again re-sends none of
    them. Exits non-zero if any item failed after its retries.
    """
    def options() -> Any:
        from annotator.construction.pipeline import GenerateOptions
        from annotator.runs.llm import RoleConfig

        if not extract_model or not rewrite_model:
            fail("--extract-model and --rewrite-model are required (or --run-id of a queued run)", 2)
        body = _json_object("--extra-body", extra_body)
        common = {"temperature": temperature, "max_tokens": max_tokens, "extra_body": body, "timeout": timeout}
        return GenerateOptions(
            extract=RoleConfig(model=extract_model, base_url=base_url, api_key_env=api_key_env, **common),
            rewrite=RoleConfig(
                model=rewrite_model, base_url=rewrite_base_url or base_url,
                api_key_env=rewrite_api_key_env or api_key_env, **common,
            ),
            source=source, limit=limit, concurrency=concurrency, steps=_steps(steps),
            prompt_version=prompt_version, max_retries=max_retries, backoff_base=backoff,
            max_conditions=max_conditions,
            rewrite_types=tuple(t.strip() for t in rewrite_types.split(",") if t.strip()),
        )

    create_and_execute(RunKind.generate, run_id=run_id, options=options, progress=progress, queue=queue)
