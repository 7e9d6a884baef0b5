"""Transcript commands: `judge` (re-judge every transcript) and `report` (Precision and Prudence)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator import limits
from annotator.cli._app import app, bounded, fail

# The judge's rule sets, named here so that `--help` loads no judge (see annotator.transcripts.judge.RULES).
RULE_NAMES = ("reliablemath", "reliablemath-exact")


@app.command()
def judge(
    rule: Annotated[str, typer.Option(help=f"Rule set: {' | '.join(RULE_NAMES)}.")] = RULE_NAMES[0],
    workers: Annotated[
        int | None,
        typer.Option(help="Worker processes (default: the cores, at most 4).", **bounded(limits.WORKERS)),
    ] = None,
) -> None:
    """Re-judge every transcript with RULE and store the verdicts (with the rule's name and version)."""
    from annotator.db import get_engine
    from annotator.transcripts.verdicts import judge_transcripts

    if rule not in RULE_NAMES:
        fail(f"unknown judge rule {rule!r}; choose one of {', '.join(RULE_NAMES)}", 2)
    summary = judge_transcripts(get_engine(), rule=rule, workers=workers)
    verdicts = ", ".join(f"{v} {n}" for v, n in sorted(summary.verdicts.items())) or "none"
    typer.echo(
        f"judged {summary.judged} transcripts with {summary.rule} v{summary.version} in {summary.seconds:.1f} s: "
        f"{verdicts}; {summary.rules_disagree} verdicts differ under the other rule set"
        + (f"; {summary.timed_out} answers ran out of time (counted incorrect)" if summary.timed_out else "")
    )


def _figure(value: float | None) -> str:
    # Three decimals, as the paper prints them.
    return "—" if value is None else f"{value:.3f}"


def to_text(rows: list[dict[str, Any]], disagree: int) -> str:
    """The paper's layout (Tables 3, 6-9): per model and prompt, S/R/F, Prec. and Prud. of A, of U, and both."""
    from annotator.transcripts.report import paper_layout

    laid_out = paper_layout(rows)
    header = list(laid_out[0])
    table = [header] + [[_figure(v) if isinstance(v, float) or v is None else str(v) for v in row.values()]
                        for row in laid_out]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    lines.append(f"{disagree} verdicts differ between the rule sets reliablemath and reliablemath-exact")
    return "\n".join(lines)


@app.command()
def report(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows as a JSON list (the rule sets' disagreements on stderr).")
    ] = False,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    by: Annotated[
        str | None, typer.Option(help="Break down by data_source, rewrite_type, difficulty_eval (comma-separated).")
    ] = None,
) -> None:
    """Precision and Prudence per model and prompt (ReliableMath Eq. 1-2), from the effective verdicts."""
    from annotator.db import get_engine, read_session
    from annotator.transcripts import report as reporting

    names = [name.strip() for name in (by or "").split(",") if name.strip()]
    try:
        breakdowns = reporting.check_by(names)
    except ValueError as exc:
        fail(str(exc), 2)
    with read_session(get_engine()) as session:
        rows = reporting.report(session, model=model, by=breakdowns)
        disagree = reporting.rules_disagree(session, model=model)
    if as_json:
        # A list of rows with exactly the keys, for tools; the count of verdicts the two rule sets give
        # differently is for people, on stderr.
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        typer.echo(f"{disagree} verdicts differ between the rule sets reliablemath and reliablemath-exact", err=True)
    elif not rows:
        typer.echo("no transcripts" + (f" of model {model!r}" if model else ""))
    else:
        typer.echo(to_text(rows, disagree))
