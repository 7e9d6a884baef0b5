"""Team commands: `python -m annotator agreement [--json] [--data-source S] [--rewrite-type T]`."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator.cli._app import app

LABELS = ("human_check", "difficulty_eval")


def _figure(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _text(report: dict[str, Any]) -> str:
    lines = []
    for label in LABELS:
        block = report[label]
        lines.append(f"{label}: {block['items']} items")
        for key in ("percent", "alpha", "fleiss_kappa", "ac1"):
            reason = (block.get("undefined") or {}).get(key)
            extra = f" over items with {block['fleiss_raters']} labels" if key == "fleiss_kappa" and not reason else ""
            lines.append(f"  {key:<13} {_figure(block[key])}{extra}{f' ({reason})' if reason else ''}")
        for pair in block["pairwise"]:
            reason = f" ({pair['reason']})" if pair.get("reason") else ""
            kappa = _figure(pair["kappa"])
            lines.append(f"  kappa {pair['a']} ~ {pair['b']}: {kappa} on {pair['items']} items{reason}")
        for person in block["annotators"]:
            lines.append(
                f"  {person['name']}: {person['labels']} labels, kappa vs majority "
                f"{_figure(person['kappa_vs_majority'])}, median {_figure(person['median_seconds'])} s"
            )
    return "\n".join(lines)


@app.command()
def agreement(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for tools.")] = False,
    data_source: Annotated[str | None, typer.Option(help="Only candidates of this data source.")] = None,
    rewrite_type: Annotated[str | None, typer.Option(help="Only candidates of this rewrite type.")] = None,
    include: Annotated[
        str | None, typer.Option(help="System annotators (imports) to count too, comma-separated.")
    ] = None,
) -> None:
    """Inter-annotator agreement on human_check and difficulty_eval (percent, alpha, Fleiss, AC1, Cohen)."""
    from annotator.db import get_engine, read_session  # imported when used: `--help` stays fast
    from annotator.labels import label_rows
    from annotator.metrics import label_agreement

    names = [name.strip() for name in (include or "").split(",") if name.strip()]
    with read_session(get_engine()) as session:
        rows = label_rows(session, data_source=data_source, rewrite_type=rewrite_type, system_annotators=names)
    report = label_agreement(rows)
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else _text(report))
