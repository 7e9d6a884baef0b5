"""`python -m annotator evaluate`: collect model answers (transcripts) on the evaluation set.

The collection code, the client (and with it `openai`) and tqdm are imported when the command runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from annotator import limits
from annotator.cli import _llm_options as llm
from annotator.cli._app import app, bounded, fail
from annotator.cli._progress import progress_bar
from annotator.vocabulary import RunStatus


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
        int | None, typer.Option(help="At most this many items (solvable problems first).", **bounded(limits.LIMIT))
    ] = None,
    base_url: llm.BaseUrl = None,
    api_key_env: llm.ApiKeyEnv = llm.DEFAULT_API_KEY_ENV,
    timeout: llm.Timeout = 600.0,
    max_retries: llm.MaxRetries = 5,
    backoff: llm.Backoff = 1.0,
    run_id: llm.RunId = None,
    progress: llm.Progress = True,
) -> None:
    """Ask a model every item (solvable problems, then vetted candidates) and keep each answer as a transcript.

    Items that have a transcript for this model, prompt and sample are skipped, and answered requests are
    cached in the database: a killed or cancelled run started again re-sends nothing it has. Exits non-zero
    if any request failed after its retries.
    """
    import asyncio

    from annotator.db import get_engine, write_session
    from annotator.llm import LLMConfigError, RoleConfig
    from annotator.runs import RunError
    from annotator.transcripts.collect import create_run, execute_run
    from annotator.transcripts.options import EvaluateOptions

    engine = get_engine()
    try:
        if run_id is None:
            if not model:
                fail("--model is required (or --run-id of a queued run)", 2)
            options = EvaluateOptions(
                model=RoleConfig(model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                                 max_tokens=max_tokens, timeout=timeout),
                prompt=prompt, data_source=data_source, item_set=item_set,  # type: ignore[arg-type]
                samples=samples, limit=limit, concurrency=concurrency, max_retries=max_retries, backoff_base=backoff,
            )
            options.model.api_key()  # a missing key variable is reported before a run row exists
            with write_session(engine) as session:
                run_id = create_run(session, options=options, created_by="cli").id
        assert run_id is not None
        with progress_bar("response", show=progress) as on_progress:
            summary = asyncio.run(execute_run(engine, run_id=run_id, progress_callback=on_progress))
    except (RunError, LLMConfigError) as exc:
        fail(str(exc), 2)
    typer.echo(summary.text())
    for error in summary.errors[:10]:
        typer.echo(f"  {error['data_id']} sample {error['sample']}: {error['error']}", err=True)
    if summary.status != RunStatus.succeeded:
        raise typer.Exit(1)
