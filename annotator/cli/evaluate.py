"""`python -m annotator evaluate`: collect model answers (transcripts) on the evaluation set.

The collection code, the client (and with it `openai`) and tqdm are imported when the command runs.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from annotator.cli import _llm_options as llm
from annotator.cli._app import app, bounded
from annotator.cli._runs import create_and_execute
from annotator.database.vocabulary import RunKind
from annotator.settings import limits


@app.command()
def evaluate(
    model: Annotated[str | None, typer.Option(help="The model to evaluate, as the endpoint names it.")] = None,
    prompt: Annotated[
        str, typer.Option(help="standard (ReliableMath Fig. 14) or reliable (Fig. 15, offers unsolvable / don't know).")
    ] = "standard",
    data_source: Annotated[str | None, typer.Option(help="Only items of this data source (e.g. aime).")] = None,
    item_set: Annotated[
        str, typer.Option("--set", help="vetted: candidates labelled human_check = 1; all: every candidate.")
    ] = "vetted",
    samples: Annotated[
        int, typer.Option(help="Answers per item (samples 0..N-1; each its own request).", **bounded(limits.SAMPLES))
    ] = 1,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.", **bounded(limits.TEMPERATURE))] = 0.0,
    max_tokens: llm.MaxTokens = None,
    concurrency: llm.Concurrency = 8,
    limit: Annotated[
        int | None,
        typer.Option(help="At most this many items: solvable and unsolvable in proportion, at least one of each from "
                          "2 on (1 takes one item of the bigger set).", **bounded(limits.LIMIT)),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Which items --limit takes (the same seed takes the same items again).",
                          **bounded(limits.SEED))
    ] = 0,
    base_url: llm.BaseUrl = None,
    api_key_env: llm.ApiKeyEnv = llm.DEFAULT_API_KEY_ENV,
    timeout: llm.Timeout = 600.0,
    max_retries: llm.MaxRetries = 5,
    backoff: llm.Backoff = 1.0,
    run_id: llm.RunId = None,
    queue: llm.Queue = False,
    progress: llm.Progress = True,
) -> None:
    """Ask a model every item (solvable problems, then vetted candidates) and keep each answer as a transcript;
    the summary says how many solvable and unsolvable items were asked.

    Items that have a transcript for this model, prompt and sample are skipped, and answered requests are
    cached in the database: a killed or cancelled run started again re-sends nothing it has. Exits non-zero
    if any request failed after its retries.
    """
    def options() -> Any:
        from annotator.transcripts.collect.options import EvaluateOptions

        return EvaluateOptions(
            model=llm.role(model, missing="--model is required (or --run-id of a queued run)", base_url=base_url,
                           api_key_env=api_key_env, temperature=temperature, max_tokens=max_tokens, timeout=timeout),
            prompt=prompt, data_source=data_source, item_set=item_set,  # type: ignore[arg-type]
            samples=samples, limit=limit, seed=seed, concurrency=concurrency, max_retries=max_retries,
            backoff_base=backoff,
        )

    create_and_execute(RunKind.evaluate, run_id=run_id, options=options, progress=progress, queue=queue)
