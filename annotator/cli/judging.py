"""Transcript commands: `judge` (`judge rules`: re-judge every transcript with a rule set, also `judge` alone;
`judge llm`: an LLM judge run) and `report` (Precision and Prudence; `report judges`: how far each judge agrees
with the reviewers; `report compare A B`: two models; `report disagreed N`: where models disagree)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import typer

from annotator.cli import _llm_options as llm
from annotator.cli._app import app, bounded, fail, runs_alone
from annotator.cli._runs import create_and_execute
from annotator.database.vocabulary import RunKind
from annotator.settings import limits
from annotator.transcripts.judge.rule_sets import registry as rule_sets

# The rule sets' list names them without loading one, so `--help` loads no judge.
RULE_NAMES = tuple(rule_sets.names())
JUDGE_PROMPT_VERSION = "v2"  # `llm_prompt.DEFAULT_VERSION`, written out for the same reason (a test keeps them equal)


judging = typer.Typer(invoke_without_command=True, subcommand_metavar="[COMMAND [ARGS]...]")
app.add_typer(judging, name="judge")

Rule = Annotated[
    Literal[RULE_NAMES],  # type: ignore[valid-type]  # the list's names, whatever they are
    typer.Option(help=f"The rule set: {' | '.join(RULE_NAMES)} (the reference: {rule_sets.REFERENCE_RULE})."),
]
Workers = Annotated[
    int | None, typer.Option(help="Worker processes (default: the cores, at most 4).", **bounded(limits.WORKERS))
]


@judging.callback()
def judge(ctx: typer.Context, rule: Rule = rule_sets.REFERENCE_RULE, workers: Workers = None) -> None:
    """Judge every transcript with a rule set in this process (`judge rules`, what `judge` alone does), or with an
    LLM in a run (`judge llm`); the verdicts become the transcripts'."""
    if runs_alone(ctx):
        _rejudge(rule, workers)


@judging.command("rules")
def rules(rule: Rule = rule_sets.REFERENCE_RULE, workers: Workers = None) -> None:
    """Re-judge every transcript with RULE in this process and make its verdicts the transcripts' (with the
    rule's name and version)."""
    _rejudge(rule, workers)


@judging.command("llm")
def llm_judge(
    model: Annotated[str | None, typer.Option(help="The judge's model, as the endpoint names it.")] = None,
    prompt_version: Annotated[
        str, typer.Option(help="The judge prompt's version (annotator/transcripts/judge/prompts/: v2 fences the "
                          "texts it grades, v1 does not).")
    ] = JUDGE_PROMPT_VERSION,
    only_reviewed: Annotated[
        bool, typer.Option("--only-reviewed", help="Only transcripts a reviewer has given a verdict.")
    ] = False,
    limit: Annotated[
        int | None, typer.Option(help="At most the first N transcripts (by id) in scope.", **bounded(limits.LIMIT))
    ] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.", **bounded(limits.TEMPERATURE))] = 0.0,
    max_tokens: llm.MaxTokens = None,
    concurrency: llm.Concurrency = 8,
    base_url: llm.BaseUrl = None,
    api_key_env: llm.ApiKeyEnv = llm.DEFAULT_API_KEY_ENV,
    timeout: llm.Timeout = 600.0,
    max_retries: llm.MaxRetries = 5,
    backoff: llm.Backoff = 1.0,
    parts: Annotated[
        int | None,
        typer.Option(help="Split the run into N parts that workers take at once (default: one part per 5,000 "
                          "transcripts).", **bounded(limits.PARTS)),
    ] = None,
    queue: llm.Queue = False,
    run_id: llm.RunId = None,
    progress: llm.Progress = True,
) -> None:
    """An LLM judges every transcript in a run (or executes queued `--run-id`): the model grades each S / R / F
    with a one-line reason, kept per judge model and prompt version, and its verdicts become the transcripts'.

    Transcripts this judge has graded are skipped and answered requests cached, so a stopped run started again
    re-sends nothing it has. A big run is split into parts that several workers (`python -m annotator worker`)
    take at once; without --queue, this process executes them one after another. Exits non-zero if a request
    failed or a reply was not a verdict.
    """

    def options() -> Any:
        from annotator.transcripts.judge.llm_options import JudgeOptions

        return JudgeOptions(
            model=llm.role(model, missing="judge llm needs --model (or --run-id of a queued run)",
                           base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                           max_tokens=max_tokens, timeout=timeout),
            prompt_version=prompt_version, only_reviewed=only_reviewed, limit=limit, concurrency=concurrency,
            max_retries=max_retries, backoff_base=backoff, parts=parts,
        )

    create_and_execute(RunKind.judge, run_id=run_id, options=options, progress=progress, queue=queue)


def _rejudge(rule: str, workers: int | None) -> None:
    from annotator.database.engine import get_engine
    from annotator.import_export.import_summary import undecided_text
    from annotator.transcripts.judge.verdicts import judge_transcripts

    summary = judge_transcripts(get_engine(), rule=rule, workers=workers)
    verdicts = ", ".join(f"{v} {n}" for v, n in sorted(summary.verdicts.items())) or "none"
    typer.echo(
        f"judged {summary.judged} transcripts with {summary.rule} v{summary.version} in {summary.seconds:.1f} s: "
        f"{verdicts}; {differs_text(summary.differs_from_reference)}"
        + (f"; {summary.timed_out} answers ran out of time (counted incorrect)" if summary.timed_out else "")
        + (f"; {undecided_text(summary.pairs_undecided)}" if summary.pairs_undecided else "")
    )


def differs_text(count: int) -> str:
    return f"{count} verdicts differ from the reference rule ({rule_sets.REFERENCE_RULE})"


def _figure(value: float | None) -> str:
    # Three decimals, as the paper prints them.
    return "—" if value is None else f"{value:.3f}"


def to_text(rows: list[dict[str, Any]], differs: int) -> str:
    """The paper's layout (Tables 3, 6-9): per model and prompt, S/R/F, Prec. and Prud. of A, of U, and both,
    each with its 95% interval."""
    from annotator.transcripts.report.scores import paper_layout

    laid_out = paper_layout(rows, intervals=True)
    header = list(laid_out[0])
    table = [header] + [[_figure(v) if isinstance(v, float) or v is None else str(v) for v in row.values()]
                        for row in laid_out]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    notes = sorted({f"{row['model']} · {row['prompt']}: {row['ci_note']}" for row in rows if row["ci_note"]})
    lines += [f"no interval for {note}" for note in notes]
    lines.append(width_note(rows))
    lines.append(differs_text(differs))
    return "\n".join(lines)


WIDTH_NOTE = ("95% intervals: Wilson for Prec(A)..Prud(U), {methods} for Prec and Prud; with 30 items "
              "a Wilson interval is about ±0.16 wide, so close figures do not rank models")


def width_note(rows: list[dict[str, Any]]) -> str:
    """The intervals' note, naming the method of Prec and Prud's intervals in these rows (`ci_method`)."""
    from annotator.transcripts.report.scores import interval_methods

    return WIDTH_NOTE.format(methods=interval_methods(rows))


def compare_text(result: dict[str, Any], names: tuple[str, str], prompt: str) -> str:
    """`report compare`: both models' figures on the shared items, the difference with its interval, McNemar."""
    from annotator.transcripts.report.scores import PAPER_FIGURES, interval_text

    first, second = names
    lines = [f"{first} against {second}, prompt {prompt}: {result['items_a']} solvable and {result['items_u']} "
             "unsolvable items answered by both"]
    for name, title in PAPER_FIGURES:
        figures = (result["first"][name], result["second"][name], result["difference"][name])
        line = f"  {title:<8} {_figure(figures[0])}  {_figure(figures[1])}  difference {_figure(figures[2])}"
        if name in ("prec", "prud"):
            line += f" {interval_text(result[name + '_diff_ci'])} ({DIFF_METHODS[result['diff_ci_method']]}, 95%)"
        else:
            test = result["mcnemar"].get(name)
            p = "—" if not test or test["p"] is None else f"{test['p']:.4g}"
            line += f"  McNemar exact: b={test['b'] if test else 0} c={test['c'] if test else 0} p={p}"
        lines.append(line)
    if result["note"]:
        lines.append(f"  note: {result['note']}")
    return "\n".join(lines)


DIFF_METHODS = {"newcombe-mover": "Newcombe's paired interval per set, MOVER over A and U",
                "bootstrap": "paired bootstrap", None: "no interval"}


def _compare(session: Any, names: tuple[str, str], prompt: str | None, resamples: int, seed: int) -> list[Any]:
    """[(prompt, result)] for each prompt both models answered (or the one asked for); fails naming what's missing."""
    from annotator.transcripts.report import counting
    from annotator.transcripts.report import scores as reporting
    from annotator.transcripts.report.uncertainty import compare

    pooled = reporting.tallies(counting.verdict_groups(session))
    prompts = {name: {p for m, p in pooled if m == name} for name in names}
    for name in names:
        if not prompts[name]:
            fail(f"no judged transcripts of model {name!r}", 1)
    shared = sorted(prompts[names[0]] & prompts[names[1]])
    if prompt is not None:
        if prompt not in shared:
            fail(f"models {names[0]!r} and {names[1]!r} do not both have judged transcripts with prompt {prompt!r}", 1)
        shared = [prompt]
    if not shared:
        fail(f"models {names[0]!r} and {names[1]!r} share no prompt", 1)
    return [(p, compare(pooled[(names[0], p)].items, pooled[(names[1], p)].items, resamples=resamples, seed=seed))
            for p in shared]


def disagreed_text(rows: list[dict[str, Any]]) -> str:
    """`report disagreed N`: the items the models disagree on most, each model's verdicts on one line."""
    from annotator.transcripts.report.disagreed import verdicts_text

    if not rows:
        return "no item that two models answered differently"
    table = [["disagreement", "models", "prompt", "data_id", "type", "verdicts"]]
    for row in rows:
        table.append([f"{row['disagreement']:.3f}", str(row["models"]), row["prompt"], row["data_id"],
                      row["rewrite_type"] or "solvable", verdicts_text(row["verdicts"])])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    lines = ["  ".join([*(cell.ljust(width) for cell, width in zip(line, widths)), line[-1]]).rstrip()
             for line in table]
    lines.append(DISAGREEMENT_NOTE)
    return "\n".join(lines)


DISAGREEMENT_NOTE = ("disagreement: the chance that two different models, each giving one of its responses on the item "
                     "at random, get different verdicts (0: all agree; 1: no two agree)")


def _disagreed(limit: int, as_json: bool) -> None:
    from annotator.database.engine import get_engine, read_session
    from annotator.transcripts.report.disagreed import disagreed_items

    with read_session(get_engine()) as session:
        rows = disagreed_items(session, limit=limit)
    typer.echo(json.dumps(rows, indent=2, ensure_ascii=False) if as_json else disagreed_text(rows))


reporting = typer.Typer(invoke_without_command=True, subcommand_metavar="[COMMAND [ARGS]...]")
app.add_typer(reporting, name="report")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Model = Annotated[str | None, typer.Option(help="Only this model.")]
Bootstrap = Annotated[
    int, typer.Option(help="Bootstrap resamples for Prec and Prud's intervals where an item has several responses "
                           "(0: none).", **bounded(limits.BOOTSTRAP))
]
Seed = Annotated[int, typer.Option(help="The bootstrap's random seed.", **bounded(limits.SEED))]
# `annotator.transcripts.report.disagreed.DISAGREED`, written out so that `--help` loads no report (a test keeps
# them equal).
DISAGREED = 20


@reporting.callback()
def report(
    ctx: typer.Context,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows as a JSON list (how many verdicts differ from the reference "
                                          "rule on stderr).")
    ] = False,
    model: Model = None,
    by: Annotated[
        str | None, typer.Option(help="Break down by data_source, rewrite_type, difficulty_eval (comma-separated).")
    ] = None,
    bootstrap: Bootstrap = 2_000,
    seed: Seed = 0,
) -> None:
    """Precision and Prudence per model and prompt; its commands give the other tables: `judges` (how far each
    judge agrees with the reviewers), `compare A B` (two models), `disagreed N` (where models disagree).

    The figures are ReliableMath's (Eq. 1-2), from the effective verdicts, with 95% intervals (Wilson 1927 for each
    proportion; for Prec and Prud, MOVER over those with one response per item, else a percentile bootstrap over
    items; `ci_method` in --json says which).
    """
    if not runs_alone(ctx):
        return
    from annotator.database.engine import get_engine, read_connection
    from annotator.transcripts.report import scores as reporting

    names = [name.strip() for name in (by or "").split(",") if name.strip()]
    try:
        breakdowns = reporting.check_by(names)
    except ValueError as exc:
        fail(str(exc), 2)
    # Through Core, not an ORM session: the command's start-up skips SQLModel and the table classes.
    with read_connection(get_engine()) as connection:
        rows = reporting.report(connection, model=model, by=breakdowns, resamples=bootstrap, seed=seed)
        differs = reporting.differs_from_reference(connection, model=model)
    if as_json:
        # A list of rows with exactly the documented keys, for tools; the count of verdicts that differ from the
        # reference rule is for people, on stderr.
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        typer.echo(differs_text(differs), err=True)
    elif not rows:
        typer.echo("no transcripts" + (f" of model {model!r}" if model else ""))
    else:
        typer.echo(to_text(rows, differs))


@reporting.command("compare")
def compare_command(
    model_a: Annotated[str, typer.Argument(metavar="MODEL_A", help="The first model.")],
    model_b: Annotated[str, typer.Argument(metavar="MODEL_B", help="The second model.")],
    prompt: Annotated[str | None, typer.Option(help="Only this prompt (default: every prompt both answered).")] = None,
    bootstrap: Bootstrap = 2_000,
    seed: Seed = 0,
    as_json: AsJson = False,
) -> None:
    """Compare two models per prompt on the items both answered: Prec and Prud's difference with its 95% interval
    (Newcombe's paired interval with one response per item, else a paired bootstrap), McNemar's exact test for
    the others."""
    from annotator.database.engine import get_engine, read_session

    names = (model_a, model_b)
    with read_session(get_engine()) as session:
        results = _compare(session, names, prompt, bootstrap, seed)
    if as_json:
        payload = [{"model_a": model_a, "model_b": model_b, "prompt": p, **r} for p, r in results]
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        typer.echo("\n".join(compare_text(r, names, p) for p, r in results))


@reporting.command("disagreed")
def disagreed_command(
    n: Annotated[int, typer.Argument(help=f"How many items ({limits.DISAGREED.span()}).",
                                     **{**bounded(limits.DISAGREED), "metavar": "N"})] = DISAGREED,
    as_json: AsJson = False,
) -> None:
    """The N items the models disagree on most (an item under each prompt counts apart), with each model's
    verdicts."""
    _disagreed(n, as_json)


@reporting.command("judges")
def judges_command(model: Model = None, as_json: AsJson = False) -> None:
    """Each judge (rule sets, LLM judges) against the reviewers: Cohen's kappa, agreement, the reviewed count, the
    confusion matrix (UMWP Table 3)."""
    _judges(model, as_json)


def judges_text(rows: list[dict[str, Any]]) -> str:
    """`report judges`: one line per judge, the confusion matrix as judge verdict -> human S/R/F counts."""
    from annotator.transcripts.report.judges import VERDICTS

    header = ["judge", "reviewed", "agreement", "kappa",
              "confusion (judge verdict: reviewers' " + "/".join(VERDICTS) + ")"]
    table = [header]
    for row in rows:
        confusion = "  ".join(f"{judge}: " + "/".join(str(row["confusion"][judge][human]) for human in VERDICTS)
                              for judge in VERDICTS)
        table.append([row["judge"], str(row["reviewed"]), _figure(row["agreement"]), _figure(row["kappa"]), confusion])
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    lines += [f"no kappa for {row['judge']}: {row['kappa_note']}" for row in rows if row["kappa"] is None]
    return "\n".join(lines)


def _judges(model: str | None, as_json: bool) -> None:
    from annotator.database.engine import get_engine, read_session
    from annotator.transcripts.report.judges import judge_agreement

    with read_session(get_engine()) as session:
        rows = judge_agreement(session, model=model)
    typer.echo(json.dumps(rows, indent=2, ensure_ascii=False) if as_json else judges_text(rows))
