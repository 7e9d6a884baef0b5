"""Team commands: `python -m annotator agreement [--json] [--data-source S] [--rewrite-type T]` and
`python -m annotator batches --annotators a,b (--per-annotator N | --overlap K) --out DIR`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from annotator.cli._app import app, fail

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


@app.command()
def batches(
    annotators: Annotated[str, typer.Option(help="Who gets a sheet: account names, comma-separated.")],
    out: Annotated[Path, typer.Option(help="Directory for the sheets, one {annotator}.xlsx each.")],
    per_annotator: Annotated[int | None, typer.Option(help="Candidates per sheet (at most).")] = None,
    overlap: Annotated[
        int | None,
        typer.Option(help="Annotators per candidate (at most labels_per_candidate; default: that setting)."),
    ] = None,
    data_source: Annotated[str | None, typer.Option(help="Only candidates of this data source.")] = None,
    rewrite_type: Annotated[str | None, typer.Option(help="Only candidates of this rewrite type.")] = None,
    days: Annotated[float, typer.Option(help="Deadline: the candidates stay held for the sheets this long.")] = 14,
) -> None:
    """Excel sheets to label offline, in the ReliableMath authors' layout; `import` reads them back."""
    from annotator.batches import BatchError, create_batches, file_name
    from annotator.db import get_engine

    names = [name.strip() for name in annotators.split(",") if name.strip()]
    try:
        made = create_batches(
            get_engine(), out=out, annotators=names, per_annotator=per_annotator, overlap=overlap,
            data_source=data_source, rewrite_type=rewrite_type, days=days,
        )
    except BatchError as exc:
        fail(str(exc), 2)
    for name, ids in made.assigned.items():
        where = out / file_name(name) if ids else "no sheet (nothing left for them)"
        typer.echo(f"{name}: {len(ids)} candidates -> {where}")
    typer.echo(f"batch {made.name}: held until {made.deadline:%Y-%m-%d %H:%M} UTC")
