"""Team commands: `python -m annotator agreement [--json] [--data-source S] [--rewrite-type T]`,
`python -m annotator batches --annotators a,b (--per-annotator N | --overlap K) --out DIR`, and gold
items: `python -m annotator gold [--mark DATA_ID --label 1|2|0] [--unmark DATA_ID]` (lists them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from annotator.cli._app import app, bounded, fail, out_directory
from annotator.settings import limits

LABELS = ("human_check", "difficulty_eval")


def _figure(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _text(report: dict[str, Any]) -> str:
    from annotator.figures.agreement import COEFFICIENTS

    lines = []
    for label in LABELS:
        block = report[label]
        lines.append(f"{label}: {block['items']} items")
        for coefficient in COEFFICIENTS:
            key = coefficient.key
            reason = (block.get("undefined") or {}).get(key)
            note = f" ({reason})" if reason else f" {coefficient.note(block)}" if coefficient.note(block) else ""
            lines.append(f"  {key:<13} {_figure(block[key])}{note}")
        for pair in block["pairwise"]:
            reason = f" ({pair['reason']})" if pair.get("reason") else ""
            kappa = _figure(pair["kappa"])
            lines.append(f"  kappa {pair['a']} ~ {pair['b']}: {kappa} on {pair['items']} items{reason}")
        for person in block["annotators"]:
            lines.append(
                f"  {person['name']}: {person['labels']} labels, kappa vs majority "
                f"{_figure(person['kappa_vs_majority'])}, median {_figure(person['median_seconds'])} s, "
                f"gold accuracy {_figure(person['gold_accuracy'])}"
            )
    lines.extend(_accuracy_lines(report.get("accuracy")))
    return "\n".join(lines)


def _accuracy_lines(accuracy: dict[str, Any] | None) -> list[str]:
    if accuracy is None:
        return ["accuracy on human_check (Dawid-Skene): no labels"]
    lines = [f"accuracy on human_check (Dawid-Skene): {accuracy['items']} items, {accuracy['gold_items']} gold, "
             f"{_figure(accuracy['prior_unsolvable'])} truly unsolvable by the model"]
    for person in accuracy["annotators"]:
        interval = (f" [{_figure(person['accuracy_low'])}, {_figure(person['accuracy_high'])}]"
                    if person["accuracy_low"] is not None else "")
        lines.append(f"  {person['annotator']}: {_figure(person['accuracy'])}{interval} on {person['items']} items")
    return lines


@app.command()
def agreement(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for tools.")] = False,
    data_source: Annotated[str | None, typer.Option(help="Only candidates of this data source.")] = None,
    rewrite_type: Annotated[str | None, typer.Option(help="Only candidates of this rewrite type.")] = None,
    include: Annotated[
        str | None, typer.Option(help="System annotators (imports) to count too, comma-separated.")
    ] = None,
    llm_rater: Annotated[
        bool, typer.Option(help="Count the LLM verifier's verdict as one more rater in the annotators' accuracy.")
    ] = False,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap samples behind each accuracy's 95% interval (0: none).",
                          **bounded(limits.ACCURACY_RESAMPLES))
    ] = 200,
) -> None:
    """Inter-annotator agreement on human_check and difficulty_eval (percent, alpha, Fleiss, AC1, Cohen), and each
    annotator's accuracy on human_check (Dawid-Skene, with a bootstrap interval)."""
    from annotator.database.engine import get_engine, read_session  # imported when used: `--help` stays fast
    from annotator.figures.agreement import label_agreement
    from annotator.labelling.accuracy import fit_from_database, fit_from_frame, label_frame
    from annotator.labelling.gold import gold_accuracy

    names = [name.strip() for name in (include or "").split(",") if name.strip()]
    with read_session(get_engine()) as session:
        # Read once, as arrays: millions of labels on a big project.
        rows = label_frame(session, data_source=data_source, rewrite_type=rewrite_type, system_annotators=names)
        gold = {name: person["gold_accuracy"] for name, person in gold_accuracy(session).items()}
        fitted = (fit_from_database(session, data_source=data_source, rewrite_type=rewrite_type,
                                    system_annotators=names, llm_rater=True, resamples=resamples) if llm_rater
                  else fit_from_frame(session, rows, resamples=resamples))
    report = label_agreement(rows, gold=gold)
    report["accuracy"] = None if fitted is None else fitted.to_json()
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else _text(report))


@app.command()
def gold(
    mark: Annotated[str | None, typer.Option(help="Make this candidate (data_id) a gold item.")] = None,
    label: Annotated[
        str | None, typer.Option(help="The gold label, as Annotate's keys: 1 unsolvable simple, 2 hard, 0 not.")
    ] = None,
    unmark: Annotated[str | None, typer.Option(help="This candidate (data_id) is no longer a gold item.")] = None,
) -> None:
    """List the gold items (candidates with a known label, mixed into queues), or mark and unmark them."""
    from sqlalchemy import select

    from annotator.database.engine import get_engine, read_session, write_session
    from annotator.database.models import Candidate
    from annotator.database.vocabulary import LABEL_KEYS
    from annotator.labelling import gold as gold_items

    by_key = {key: value for value, key in LABEL_KEYS.items()}
    engine = get_engine()
    with write_session(engine) as session:
        for data_id, action in ((mark, "mark"), (unmark, "unmark")):
            if data_id is None:
                continue
            candidate_id = session.execute(select(Candidate.id).where(Candidate.data_id == data_id)).scalar()
            if candidate_id is None:
                fail(f"no candidate has data_id {data_id!r}", 2)
            if action == "unmark":
                gold_items.unmark_gold(session, candidate_id=candidate_id)
            elif label not in by_key:
                fail(f"--label must be one of {', '.join(sorted(by_key))} with --mark, got {label!r}", 2)
            else:
                chosen = by_key[label]
                gold_items.mark_gold(session, candidate_id=candidate_id, human_check=chosen.human_check,
                                     difficulty_eval=chosen.difficulty_eval, created_by=None)
    with read_session(engine) as session:
        rows = gold_items.gold_items(session)
    for row in rows:
        typer.echo(f"{row['data_id']}\thuman_check={row['human_check']}\tdifficulty_eval={row['difficulty_eval']}"
                   f"\tlabels={row['labels']}")
    typer.echo(f"{len(rows)} gold items")


@app.command()
def batches(
    annotators: Annotated[str, typer.Option(help="Who gets a sheet: account names, comma-separated.")],
    out: Annotated[Path, typer.Option(help="Directory for the sheets, one {annotator}.xlsx each.")],
    per_annotator: Annotated[
        int | None, typer.Option(help="Candidates per sheet (at most).", **bounded(limits.PER_ANNOTATOR))
    ] = None,
    overlap: Annotated[
        int | None,
        typer.Option(help="Annotators per candidate (at most labels_per_candidate; default: that setting).",
                     **bounded(limits.OVERLAP)),
    ] = None,
    data_source: Annotated[str | None, typer.Option(help="Only candidates of this data source.")] = None,
    rewrite_type: Annotated[str | None, typer.Option(help="Only candidates of this rewrite type.")] = None,
    days: Annotated[float, typer.Option(help="Deadline in days: the candidates stay held for the sheets this long.",
                                       **bounded(limits.DAYS))] = 14,
) -> None:
    """Excel sheets to label offline, in the ReliableMath authors' layout; `import` reads them back."""
    from annotator.database.engine import get_engine
    from annotator.labelling.batches import BatchError, create_batches, file_name

    names = [name.strip() for name in annotators.split(",") if name.strip()]
    try:
        made = create_batches(
            get_engine(), out=out_directory(out), annotators=names, per_annotator=per_annotator, overlap=overlap,
            data_source=data_source, rewrite_type=rewrite_type, days=days,
        )
    except BatchError as exc:
        fail(str(exc), 2)
    for name, ids in made.assigned.items():
        where = out / file_name(name) if ids else "no sheet (nothing left for them)"
        typer.echo(f"{name}: {len(ids)} candidates -> {where}")
    typer.echo(f"batch {made.name}: held until {made.deadline:%Y-%m-%d %H:%M} UTC")
