"""Transcript commands: `judge` (re-judge every transcript with a rule set, or an LLM judge run) and `report`
(Precision and Prudence; how far each judge agrees with the reviewers)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator.cli import _llm_options as llm
from annotator.cli._app import app, bounded, fail
from annotator.cli._runs import create_and_execute
from annotator.database.vocabulary import RunKind
from annotator.settings import limits

# The judge's rule sets, named here so that `--help` loads no judge (see annotator.transcripts.judge.rules.RULES), and
# the LLM judge's rule (`judge.LLM_RULE`), which a run of its own applies.
RULE_NAMES = ("reliablemath", "reliablemath-exact")
LLM_RULE = "llm"
JUDGE_PROMPT_VERSION = "v2"  # `judge_prompt.DEFAULT_VERSION`, written out for the same reason (a test keeps them equal)


@app.command()
def judge(
    rule: Annotated[
        str, typer.Option(help=f"Rule: {' | '.join((*RULE_NAMES, LLM_RULE))} (llm: an LLM judges, in a run).")
    ] = RULE_NAMES[0],
    workers: Annotated[
        int | None,
        typer.Option(help="Rule sets: worker processes (default: the cores, at most 4).", **bounded(limits.WORKERS)),
    ] = None,
    model: Annotated[str | None, typer.Option(help="--rule llm: the judge's model, as the endpoint names it.")] = None,
    prompt_version: Annotated[
        str, typer.Option(help="--rule llm: the judge prompt's version (annotator/transcripts/judge/prompts/: v2 "
                          "fences the texts it grades, v1 does not).")
    ] = JUDGE_PROMPT_VERSION,
    only_reviewed: Annotated[
        bool, typer.Option("--only-reviewed", help="--rule llm: only transcripts a reviewer has given a verdict.")
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(help="--rule llm: at most the first N transcripts (by id) in scope.", **bounded(limits.LIMIT)),
    ] = None,
    temperature: Annotated[float, typer.Option(help="--rule llm: sampling temperature.",
                                               **bounded(limits.TEMPERATURE))] = 0.0,
    max_tokens: llm.MaxTokens = None,
    concurrency: llm.Concurrency = 8,
    base_url: llm.BaseUrl = None,
    api_key_env: llm.ApiKeyEnv = llm.DEFAULT_API_KEY_ENV,
    timeout: llm.Timeout = 600.0,
    max_retries: llm.MaxRetries = 5,
    backoff: llm.Backoff = 1.0,
    parts: Annotated[
        int | None,
        typer.Option(help="--rule llm: split the run into N parts that workers take at once (default: one part per "
                          "5,000 transcripts).", **bounded(limits.PARTS)),
    ] = None,
    queue: llm.Queue = False,
    run_id: llm.RunId = None,
    progress: llm.Progress = True,
) -> None:
    """Judge every transcript with RULE and make its verdicts the transcripts' (with the rule's name and version).

    The rule sets re-judge in this process. `--rule llm` creates a judge run (or executes queued `--run-id`): the
    model grades each transcript S / R / F with a one-line reason, kept per judge model and prompt version;
    transcripts this judge has graded are skipped and answered requests cached, so a stopped run started again
    re-sends nothing it has. A big run is split into parts that several workers (`python -m annotator worker`) take
    at once; without --queue, this process executes them one after another. Exits non-zero if a request failed or
    a reply was not a verdict.
    """
    if rule == LLM_RULE or run_id is not None:
        if workers is not None:
            fail("--workers goes with the rule sets, not with --rule llm", 2)

        def options() -> Any:
            from annotator.transcripts.judge.llm_options import JudgeOptions

            return JudgeOptions(
                model=llm.role(model, missing="--rule llm needs --model (or --run-id of a queued run)",
                               base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                               max_tokens=max_tokens, timeout=timeout),
                prompt_version=prompt_version, only_reviewed=only_reviewed, limit=limit, concurrency=concurrency,
                max_retries=max_retries, backoff_base=backoff, parts=parts,
            )

        create_and_execute(RunKind.judge, run_id=run_id, options=options, progress=progress, queue=queue)
        return
    if rule not in RULE_NAMES:
        fail(f"unknown judge rule {rule!r}; choose one of {', '.join((*RULE_NAMES, LLM_RULE))}", 2)
    if model or base_url or only_reviewed or limit is not None:
        fail("--model, --base-url, --only-reviewed and --limit go with --rule llm", 2)
    if parts is not None or queue:
        fail("--parts and --queue go with --rule llm", 2)
    _rejudge(rule, workers)


def _rejudge(rule: str, workers: int | None) -> None:
    from annotator.database.engine import get_engine
    from annotator.import_export.import_summary import undecided_text
    from annotator.transcripts.judge.verdicts import judge_transcripts

    summary = judge_transcripts(get_engine(), rule=rule, workers=workers)
    verdicts = ", ".join(f"{v} {n}" for v, n in sorted(summary.verdicts.items())) or "none"
    typer.echo(
        f"judged {summary.judged} transcripts with {summary.rule} v{summary.version} in {summary.seconds:.1f} s: "
        f"{verdicts}; {summary.rules_disagree} verdicts differ under the other rule set"
        + (f"; {summary.timed_out} answers ran out of time (counted incorrect)" if summary.timed_out else "")
        + (f"; {undecided_text(summary.pairs_undecided)}" if summary.pairs_undecided else "")
    )


def _figure(value: float | None) -> str:
    # Three decimals, as the paper prints them.
    return "—" if value is None else f"{value:.3f}"


def to_text(rows: list[dict[str, Any]], disagree: int) -> str:
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
    lines.append(f"{disagree} verdicts differ between the rule sets reliablemath and reliablemath-exact")
    return "\n".join(lines)


WIDTH_NOTE = ("95% intervals: Wilson for Prec(A)..Prud(U), {methods} for Prec and Prud; with 30 items "
              "a Wilson interval is about ±0.16 wide, so close figures do not rank models")


def width_note(rows: list[dict[str, Any]]) -> str:
    """The intervals' note, naming the method of Prec and Prud's intervals in these rows (`ci_method`)."""
    from annotator.transcripts.report.scores import interval_methods

    return WIDTH_NOTE.format(methods=interval_methods(rows))


def compare_text(result: dict[str, Any], names: tuple[str, str], prompt: str) -> str:
    """`report --compare`: both models' figures on the shared items, the difference with its interval, McNemar."""
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
    """`report --disagreed N`: the items the models disagree on most, each model's verdicts on one line."""
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


def _another_table(judges: bool, disagreed: int | None, *, model: str | None, by: tuple[str, ...],
                   compare: tuple[str, str] | None, prompt: str | None, as_json: bool) -> bool:
    """`report --judges` or `report --disagreed N` instead of the report (True when one of them was asked)."""
    if judges:
        if by or compare or prompt:
            fail("--judges takes no --by, --compare or --prompt", 2)
        _judges(model, as_json)
        return True
    if disagreed is not None:
        if model or by or compare or prompt is not None:
            fail("--disagreed takes no --model, --by, --compare or --prompt", 2)
        _disagreed(disagreed, as_json)
        return True
    return False


@app.command()
def report(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows as a JSON list (the rule sets' disagreements on stderr).")
    ] = False,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    by: Annotated[
        str | None, typer.Option(help="Break down by data_source, rewrite_type, difficulty_eval (comma-separated).")
    ] = None,
    bootstrap: Annotated[
        int, typer.Option(help="Bootstrap resamples for Prec and Prud's intervals where an item has several "
                               "responses (0: none).",
                          **bounded(limits.BOOTSTRAP))
    ] = 2_000,
    seed: Annotated[int, typer.Option(help="The bootstrap's random seed.", **bounded(limits.SEED))] = 0,
    compare: Annotated[
        tuple[str, str] | None,
        typer.Option(help="Compare two models on the items both answered (Newcombe's paired interval with one response "
                          "per item, else a paired bootstrap; McNemar's exact test).",
                     metavar="MODEL_A MODEL_B"),
    ] = None,
    prompt: Annotated[str | None, typer.Option(help="With --compare: only this prompt.")] = None,
    disagreed: Annotated[
        int | None,
        typer.Option(help="Instead: the N items the models disagree on most (an item under each prompt counts apart), "
                          "with each model's verdicts.",
                     **bounded(limits.DISAGREED)),
    ] = None,
    judges: Annotated[
        bool, typer.Option("--judges", help="Each judge (rule sets, LLM judges) against the reviewers: Cohen's kappa, "
                           "agreement, the reviewed count, the confusion matrix (UMWP Table 3).")
    ] = False,
) -> None:
    """Precision and Prudence per model and prompt (ReliableMath Eq. 1-2), from the effective verdicts, with
    95% intervals (Wilson 1927 for each proportion; for Prec and Prud, MOVER over those with one response per item,
    else a percentile bootstrap over items; `ci_method` in --json says which)."""
    from annotator.database.engine import get_engine, read_connection, read_session
    from annotator.transcripts.report import scores as reporting

    names = [name.strip() for name in (by or "").split(",") if name.strip()]
    try:
        breakdowns = reporting.check_by(names)
    except ValueError as exc:
        fail(str(exc), 2)
    if _another_table(judges, disagreed, model=model, by=breakdowns, compare=compare, prompt=prompt,
                      as_json=as_json):
        return
    if compare is not None:
        if model or breakdowns:
            fail("--compare takes no --model or --by", 2)
        with read_session(get_engine()) as session:
            results = _compare(session, compare, prompt, bootstrap, seed)
        if as_json:
            payload = [{"model_a": compare[0], "model_b": compare[1], "prompt": p, **r} for p, r in results]
            typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            typer.echo("\n".join(compare_text(r, compare, p) for p, r in results))
        return
    if prompt is not None:
        fail("--prompt goes with --compare", 2)
    # Through Core, not an ORM session: the command's start-up skips SQLModel and the table classes (issue 20).
    with read_connection(get_engine()) as connection:
        rows = reporting.report(connection, model=model, by=breakdowns, resamples=bootstrap, seed=seed)
        disagree = reporting.rules_disagree(connection, model=model)
    if as_json:
        # A list of rows with exactly the keys, for tools; the count of verdicts the two rule sets give
        # differently is for people, on stderr.
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        typer.echo(f"{disagree} verdicts differ between the rule sets reliablemath and reliablemath-exact", err=True)
    elif not rows:
        typer.echo("no transcripts" + (f" of model {model!r}" if model else ""))
    else:
        typer.echo(to_text(rows, disagree))


def judges_text(rows: list[dict[str, Any]]) -> str:
    """`report --judges`: one line per judge, the confusion matrix as judge verdict -> human S/R/F counts."""
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
