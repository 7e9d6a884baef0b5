"""More sources: `treecut` (generate verified TreeCut pairs) and `distract` (GSM-IC-style variants).

The generator, the database and the importer are imported inside the commands, when they run: `--help` and
every other command start without them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from annotator.cli._app import app, bounded, fail, out_directory
from annotator.settings import limits


@app.command()
def treecut(
    num_vars: Annotated[
        int, typer.Option("--num-vars", help="numVars: variables in each problem.", **bounded(limits.TREECUT_VARS))
    ],
    ans_depth: Annotated[int, typer.Option("--ans-depth", help="ansDepth: distance from the root to the question.",
                                  **bounded(limits.TREECUT_DEPTH))],
    count: Annotated[int, typer.Option("--count", help="How many pairs.", **bounded(limits.TREECUT_COUNT))],
    seed: Annotated[int, typer.Option("--seed", help="Random seed; the same seed gives the same pairs.",
                                            **bounded(limits.SEED))],
    out: Annotated[Path, typer.Option("--out", help="Directory for the two JSONL files.")],
    cut_depth: Annotated[
        int | None,
        typer.Option("--cut-depth", help="cutDepth: distance from the question to the cut (default ansDepth // 2).",
                     **bounded(limits.TREECUT_CUT_DEPTH)),
    ] = None,
    composite_name: Annotated[
        bool, typer.Option("--composite-name/--simple-name", help="Names like 'a burger at Texas BBQ' or 'a burger'.")
    ] = True,
    order: Annotated[
        str, typer.Option("--order", help="forward, backward or random order of the conditions.")
    ] = "random",
    theme: Annotated[
        str, typer.Option("--theme", help="Theme of the item names; an unknown one is refused with the known ones.")
    ] = "food",
    coefficients: Annotated[
        str,
        typer.Option("--coefficients", help="reference: sign patterns (+,+), (+,-), (-,+) as the reference "
                     "generator; paper: a, b from {-3..3} without 0, as Algorithm 1 reads."),
    ] = "reference",
    do_import: Annotated[bool, typer.Option("--import", help="Also add the pairs to the database.")] = False,
) -> None:
    """Generate answerable/unanswerable TreeCut pairs, every one checked exactly, as TreeCut JSONL files."""
    from annotator.construction import treecut as treecut_module

    if count < 1:
        fail("--count must be at least 1", 2)
    try:
        params = treecut_module.Params(
            num_vars=num_vars,
            ans_depth=ans_depth,
            cut_depth=cut_depth if cut_depth is not None else max(1, ans_depth // 2),
            composite_name=composite_name,
            order=order,
            theme=theme,
        )
    except ValueError as exc:
        fail(str(exc), 2)
    out_directory(out)
    started = time.perf_counter()
    if coefficients not in treecut_module.COEFFICIENT_MODES:
        fail(f"--coefficients must be one of {', '.join(treecut_module.COEFFICIENT_MODES)}, got {coefficients!r}", 2)
    pairs = list(treecut_module.generate_pairs(params, count=count, seed=seed, coefficients=coefficients))
    answerable, unanswerable = treecut_module.write_pairs(pairs, params, out, seed=seed, coefficients=coefficients)
    elapsed = time.perf_counter() - started
    typer.echo(f"{count} pairs generated and checked in {elapsed:.2f} s")
    typer.echo(f"{answerable}\n{unanswerable}")
    if do_import:
        from annotator.database.engine import get_engine
        from annotator.import_export.formats import treecut as treecut_format
        from annotator.import_export.importer import import_parts

        parts = [treecut_format.read_file(answerable), treecut_format.read_file(unanswerable)]
        summary = import_parts(parts, engine=get_engine())
        typer.echo(f"imported {summary.problems_added} problems and {summary.candidates_added} candidates")


@app.command()
def distract(
    data_source: Annotated[
        list[str] | None, typer.Option("--data-source", help="Only problems of these data sources (default: all).")
    ] = None,
    per_problem: Annotated[
        int, typer.Option("--per-problem", help="Variants per problem.", **bounded(limits.PER_PROBLEM))
    ] = 4,
    role: Annotated[str, typer.Option("--role", help="overlapped, nonoverlapped or both.")] = "both",
    number: Annotated[str, typer.Option("--number", help="in_range, out_range or both.")] = "both",
    topic: Annotated[str, typer.Option("--topic", help="in_topic, out_topic or both.")] = "both",
    seed: Annotated[int, typer.Option("--seed", help="Random seed.", **bounded(limits.SEED))] = 0,
    limit: Annotated[
        int | None, typer.Option("--limit", help="At most this many problems.", **bounded(limits.LIMIT))
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Also write the variants as a GSM-IC JSON file.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Do not add the variants to the database.")] = False,
) -> None:
    """Add GSM-IC-style variants (an irrelevant sentence, in topic or off topic as Table 9) of solvable problems
    as `distractor` candidates."""
    from annotator.construction import gsm_ic as distract_module
    from annotator.database.engine import get_engine
    from annotator.import_export.importer import import_parts

    try:
        options = distract_module.Options(
            per_problem=per_problem, role=role, number=number, topic=topic, seed=seed
        )
    except ValueError as exc:
        fail(str(exc), 2)
    engine = get_engine()
    records = distract_module.variants_for_database(engine, options=options, data_sources=data_source, limit=limit)
    covered = distract_module.summary(records)
    typer.echo(
        f"{covered['problems']} problems: {covered['without_character']} with no named character (no overlapped "
        f"role), {covered['without_in_topic']} with no countable thing (no in-topic sentence)"
    )
    if out is not None:
        path = distract_module.write_gsm_ic(records, out)
        typer.echo(f"{path}: {len(records)} records")
    if not dry_run:
        summary = import_parts([distract_module.as_import_part(records)], engine=engine)
        typer.echo(f"added {summary.candidates_added} distractor candidates ({summary.unchanged} unchanged)")
    else:
        typer.echo(f"{len(records)} variants (dry run, nothing added)")
