"""The audit of the release: `python -m annotator audit draw --size N --seed S --by NAME`, `audit status [--json]`,
`audit decide DATA_ID --unsolvable|--not-unsolvable --by NAME [--comment TEXT]`.

A reviewer or an admin draws a seeded sample of the vetted candidates, stratified by data source, and re-checks each
(here or on Adjudicate's audit queue); `status` gives the share of vetted candidates truly unsolvable with its 95%
Wilson interval and the sample it rests on.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator.cli._app import app, bounded, fail
from annotator.settings import limits

audit = typer.Typer(help="Re-check a random sample of the vetted set: the release's own precision.",
                    no_args_is_help=True)
app.add_typer(audit, name="audit")

_BY = typer.Option("--by", help="Who audits: the account name of a reviewer or an admin.")


def _auditor(session: Any, name: str) -> int:
    """The id of the account `name`, which must be active and may audit; else a one-line error."""
    from sqlalchemy import select

    from annotator.accounts.policies import Capability, allows, roles_with
    from annotator.database.models import Annotator

    row = session.execute(select(Annotator.id, Annotator.role, Annotator.is_active, Annotator.is_system)
                          .where(Annotator.name == name)).first()
    if row is None:
        fail(f"{name!r} has no account", 2)
    if not row.is_active or row.is_system or not allows(row.role, Capability.audit):
        who = " or ".join(f"{role}s" for role in roles_with(Capability.audit))
        fail(f"{name!r} may not audit (role {row.role}{'' if row.is_active else ', disabled'}): only {who} do", 2)
    return int(row.id)


@audit.command("draw")
def draw(
    size: Annotated[int, typer.Option(help="Candidates to draw.", **bounded(limits.AUDIT_SIZE))],
    seed: Annotated[int, typer.Option(help="The random seed: the same seed draws the same sample.",
                                      **bounded(limits.AUDIT_SEED))],
    by: Annotated[str, _BY],
    again: Annotated[bool, typer.Option("--again", help="Replace the audit sample already drawn (its decisions "
                                        "are kept in the database but no longer counted).")] = False,
) -> None:
    """Draw the audit sample: vetted candidates by data source (proportional, one at least), seeded."""
    from annotator.database.engine import get_engine, write_session
    from annotator.labelling import audit as audits

    try:
        with write_session(get_engine()) as session:
            drawn = audits.draw(session, size=size, seed=seed, drawn_by=_auditor(session, by), again=again)
    except audits.AuditError as exc:
        fail(str(exc), 2)
    per_source = ", ".join(f"{source} {count}" for source, count in drawn["per_source"].items())
    typer.echo(f"drew {drawn['drawn']} vetted candidates with seed {seed}: {per_source}")


@audit.command("status")
def status(as_json: Annotated[bool, typer.Option("--json", help="Print JSON for tools.")] = False) -> None:
    """The share of vetted candidates truly unsolvable, its 95% Wilson interval and the sample it rests on."""
    from annotator.database.engine import get_engine, read_session
    from annotator.labelling import audit as audits

    with read_session(get_engine()) as session:
        estimate = audits.estimate(session)
        left = audits.left_to_audit(session)
    if as_json:
        typer.echo(json.dumps(estimate, indent=2, ensure_ascii=False))
        return
    typer.echo(audits.describe(estimate))
    for source, counts in estimate["per_source"].items():
        typer.echo(f"  {source}: {counts['audited']} of {counts['drawn']} drawn audited, {counts['unsolvable']} "
                   f"truly unsolvable; {counts['vetted']} vetted")
    if estimate["sample"] is not None:
        typer.echo(f"{left} left to audit")


@audit.command("decide")
def decide(
    data_id: Annotated[str, typer.Argument(help="The sampled candidate's data_id.")],
    by: Annotated[str, _BY],
    unsolvable: Annotated[bool | None, typer.Option("--unsolvable/--not-unsolvable",
                                                   help="Truly unsolvable, or not.")] = None,
    comment: Annotated[str | None, typer.Option(help="Why, optionally.")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace another reviewer's decision.")] = False,
) -> None:
    """Record a reviewer's audit of one candidate of the sample."""
    from sqlalchemy import select

    from annotator.database.engine import get_engine, write_session
    from annotator.database.models import Candidate
    from annotator.labelling import audit as audits

    if unsolvable is None:
        fail("say --unsolvable or --not-unsolvable", 2)
    try:
        with write_session(get_engine()) as session:
            reviewer = _auditor(session, by)
            candidate_id = session.execute(select(Candidate.id).where(Candidate.data_id == data_id)).scalar()
            if candidate_id is None:
                fail(f"no candidate has data_id {data_id!r}", 2)
            audits.decide(session, candidate_id=candidate_id, reviewer_id=reviewer, unsolvable=int(unsolvable),
                          comment=(comment or "").strip() or None, replace=replace)
    except audits.AuditedMeanwhile as exc:
        fail(f"{data_id}: {exc}; --replace replaces it", 2)
    except audits.AuditError as exc:
        fail(f"{data_id}: {exc}", 2)
    typer.echo(f"{data_id}: {audits.DECISIONS[int(unsolvable)]}")
