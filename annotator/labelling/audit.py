"""The audit: a reviewer re-checks a random sample of the vetted set, and the release's own precision follows.

The vetted set is what the reliablemath export releases (`queue.vetted`, unsolvable-by-design candidates only). A
sample is drawn stratified by data source with proportional allocation (each source with vetted candidates gets at
least one), seeded, so that the same seed over the same vetted set draws the same candidates. The newest sample is
the audit: a reviewer marks each of its candidates truly unsolvable or not (Adjudicate's audit queue, or
`python -m annotator audit decide`), and `estimate` gives the share of vetted candidates that are truly unsolvable
with its 95% Wilson interval and the sample it rests on; "not audited" until there is one decision. Only the sampled
candidates that are still vetted count (a label changed since the draw may have taken one out of the release).
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, insert, select
from sqlmodel import Session

from annotator.accounts.auth import check_writer
from annotator.accounts.policies import Capability
from annotator.database.models import Annotator, AuditItem, AuditSample, Candidate, utcnow
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN
from annotator.figures.agreement.intervals import LEVEL, wilson
from annotator.labelling.queue import label_target, vetted
from annotator.settings import limits

NOT_AUDITED = "not audited"
AUDITED = "audited"
DECISIONS = {1: "truly unsolvable", 0: "not unsolvable"}


class AuditError(ValueError):
    """An audit request that cannot be done (no vetted candidates, a size below the sources, no sample, ...)."""


class AuditedMeanwhile(AuditError):
    """Another reviewer decided this candidate of the sample since it was shown; `replace` decides again."""

    def __init__(self, *, by: str, unsolvable: int) -> None:
        super().__init__(f"{by} audited this candidate meanwhile: {DECISIONS[unsolvable]}")
        self.by, self.unsolvable = by, unsolvable


def released(session: Session) -> ColumnElement[bool]:
    """The candidates the reliablemath export releases: vetted and meant to be unsolvable."""
    return and_(vetted(label_target(session)),
                Candidate.rewrite_type.not_in([str(kind) for kind in SOLVABLE_BY_DESIGN]))


def allocate(counts: Mapping[str, int], size: int) -> dict[str, int]:
    """How many to draw from each source: proportional to its `counts`, at least one from each non-empty source,
    `size` in all (every candidate when `size` is at least their number); largest remainders take what rounding
    leaves, ties by source name.

    Raises:
        AuditError: `size` is below the number of non-empty sources.
    """
    sources = {source: count for source, count in counts.items() if count > 0}
    total = sum(sources.values())
    if size >= total:
        return dict(sources)
    if size < len(sources):
        raise AuditError(f"a sample of {size} cannot hold one candidate of each of the {len(sources)} data sources "
                         f"with vetted candidates; draw at least {len(sources)}")
    shares = {source: size * count / total for source, count in sources.items()}
    chosen = {source: min(count, max(1, math.floor(shares[source]))) for source, count in sources.items()}
    while sum(chosen.values()) > size:  # the floors of one went over: take back from the most above their share
        source = min((s for s in chosen if chosen[s] > 1), key=lambda s: (shares[s] - chosen[s], s))
        chosen[source] -= 1
    while sum(chosen.values()) < size:
        source = min((s for s in chosen if chosen[s] < sources[s]), key=lambda s: (chosen[s] - shares[s], s))
        chosen[source] += 1
    return chosen


def current_sample(session: Session) -> AuditSample | None:
    """The newest sample: the one the audit rests on."""
    return session.execute(select(AuditSample).order_by(AuditSample.id.desc()).limit(1)).scalar_one_or_none()


def _vetted_by_source(session: Session) -> dict[str, list[tuple[str, int]]]:
    """The released candidates as (data_id, id), sorted by data_id, per data source."""
    query = select(Candidate.data_source, Candidate.data_id, Candidate.id).where(released(session))
    by_source: dict[str, list[tuple[str, int]]] = {}
    for source, data_id, candidate_id in session.execute(query.order_by(Candidate.data_source, Candidate.data_id)):
        by_source.setdefault(source, []).append((data_id, candidate_id))
    return by_source


def draw(session: Session, *, size: int, seed: int, drawn_by: int, again: bool = False) -> dict[str, Any]:
    """Draw a sample of `size` vetted candidates stratified by data source (`allocate`), seeded, and store it as
    the audit; returns {"sample", "seed", "drawn", "per_source"}. Call inside `write_session()`.

    The candidates of a source are sorted by data_id before the seeded draw, and the queue's order is a seeded
    shuffle of the whole sample: the same seed over the same vetted set gives the same sample in the same order.

    Raises:
        AccountDisabled: `drawn_by` may not audit.
        AuditError: nothing vetted, a size below the sources, or a sample already drawn and not `again`.
    """
    check_writer(session, user_id=drawn_by, capability=Capability.audit)
    limits.AUDIT_SIZE.check(size, name="the sample size")
    limits.AUDIT_SEED.check(seed, name="the seed")
    current = current_sample(session)
    if current is not None and not again:
        raise AuditError(f"an audit sample is already drawn (seed {current.seed}, {_drawn(session, current.id)} "
                         "candidates); drawing again replaces it in the audit (its decisions are kept, uncounted)")
    by_source = _vetted_by_source(session)
    if not by_source:
        raise AuditError("no vetted candidates to audit yet")
    allocation = allocate({source: len(rows) for source, rows in by_source.items()}, size)
    rng = random.Random(seed)
    chosen: list[tuple[str, int]] = []
    for source in sorted(allocation):
        picked = rng.sample(by_source[source], allocation[source])
        chosen.extend((source, candidate_id) for _, candidate_id in sorted(picked))
    rng.shuffle(chosen)
    sample = AuditSample(seed=seed, size=size, vetted=sum(len(rows) for rows in by_source.values()),
                         drawn_by=drawn_by)
    session.add(sample)
    session.flush()
    session.execute(insert(AuditItem), [
        {"sample_id": sample.id, "candidate_id": candidate_id, "data_source": source, "position": position}
        for position, (source, candidate_id) in enumerate(chosen)
    ])
    return {"sample": sample.id, "seed": seed, "drawn": len(chosen), "per_source": dict(sorted(allocation.items()))}


def _drawn(session: Session, sample_id: int) -> int:
    return session.execute(select(func.count()).where(AuditItem.sample_id == sample_id)).scalar_one()


def next_to_audit(session: Session, *, exclude: Collection[int] = ()) -> int | None:
    """The next candidate of the audit sample nobody has decided yet (not in `exclude`), in the sample's order."""
    sample = current_sample(session)
    if sample is None:
        return None
    query = select(AuditItem.candidate_id).where(AuditItem.sample_id == sample.id, AuditItem.unsolvable.is_(None))
    if exclude:
        query = query.where(AuditItem.candidate_id.not_in(list(exclude)))
    return session.execute(query.order_by(AuditItem.position).limit(1)).scalar_one_or_none()


def left_to_audit(session: Session) -> int:
    """How many candidates of the audit sample nobody has decided yet."""
    sample = current_sample(session)
    if sample is None:
        return 0
    query = select(func.count()).where(AuditItem.sample_id == sample.id, AuditItem.unsolvable.is_(None))
    return session.execute(query).scalar_one()


def decide(session: Session, *, candidate_id: int, reviewer_id: int, unsolvable: int, comment: str | None = None,
           replace: bool = False, at: datetime | None = None) -> None:
    """Record a reviewer's audit of one sampled candidate: truly unsolvable (1) or not (0), with a comment, at `at`
    (the key's time; the time of writing when None). Call inside `write_session()`.

    Raises:
        AccountDisabled: the reviewer may not audit.
        AuditError: no sample, the candidate not in it, or `unsolvable` not 0 or 1.
        AuditedMeanwhile: another reviewer decided it already and `replace` was not asked for.
    """
    check_writer(session, user_id=reviewer_id, capability=Capability.audit)
    if type(unsolvable) is not int or unsolvable not in DECISIONS:
        raise AuditError(f"an audit decision is 1 (truly unsolvable) or 0 (not), got {unsolvable!r}")
    sample = current_sample(session)
    if sample is None:
        raise AuditError("no audit sample is drawn (audit draw)")
    item = session.execute(
        select(AuditItem).where(AuditItem.sample_id == sample.id, AuditItem.candidate_id == candidate_id)
        .with_for_update()  # PostgreSQL: two reviewers on one item, the second sees the first's decision
    ).scalar_one_or_none()
    if item is None:
        raise AuditError("this candidate is not in the audit sample")
    if item.unsolvable is not None and item.audited_by != reviewer_id and not replace:
        by = session.execute(select(Annotator.name).where(Annotator.id == item.audited_by)).scalar_one()
        raise AuditedMeanwhile(by=by, unsolvable=item.unsolvable)
    item.unsolvable, item.comment = unsolvable, comment or None
    item.audited_by, item.audited_at = reviewer_id, at or utcnow()
    session.add(item)
    session.flush()


def _share(unsolvable: int, audited: int) -> dict[str, Any]:
    interval = wilson(unsolvable, audited)
    return {"unsolvable_share": unsolvable / audited if audited else None,
            "interval": None if interval is None else list(interval)}


def estimate(session: Session, *, with_model: bool = True) -> dict[str, Any]:
    """The share of vetted candidates that are truly unsolvable, from the audit (JSON-plain).

    {"status": "audited" or "not audited", "unsolvable_share", "interval" ([low, high], 95% Wilson), "confidence",
    "method", "audited" and "unsolvable" (sampled candidates still vetted, decided and found truly unsolvable),
    "drawn", "no_longer_vetted", "sample" ({"id", "seed", "size", "drawn_by", "drawn_at", "vetted"} or None),
    "per_source" ({source: {"vetted", "drawn", "audited", "unsolvable", "unsolvable_share", "interval"}}) and
    "model_estimate": once a sample is drawn, the Dawid-Skene estimate of the same share shown beside it
    (`{"unsolvable_share", "interval", "method", "candidates", "without_labels"}`), None without labels to fit or
    without `with_model` (a caller that shows only the audit's figure spares the model's refit).
    """
    result: dict[str, Any] = {"status": NOT_AUDITED, **_share(0, 0), "confidence": LEVEL, "method": "wilson",
                              "audited": 0, "unsolvable": 0, "drawn": 0, "no_longer_vetted": 0, "sample": None,
                              "per_source": {}, "model_estimate": None}
    sample = current_sample(session)
    if sample is None:
        return result
    by = session.execute(select(Annotator.name).where(Annotator.id == sample.drawn_by)).scalar_one()
    result["sample"] = {"id": sample.id, "seed": sample.seed, "size": sample.size, "drawn_by": by,
                        "drawn_at": sample.drawn_at.isoformat(timespec="seconds"), "vetted": sample.vetted}
    now_vetted = dict(session.execute(
        select(Candidate.data_source, func.count()).where(released(session)).group_by(Candidate.data_source)).all())
    still = released(session).label("still")
    rows = session.execute(
        select(AuditItem.data_source, still, AuditItem.unsolvable, func.count())
        .join(Candidate, Candidate.id == AuditItem.candidate_id)
        .where(AuditItem.sample_id == sample.id)
        .group_by(AuditItem.data_source, still, AuditItem.unsolvable)
    ).all()
    per_source: dict[str, dict[str, int]] = {}
    for source, is_vetted, unsolvable, count in rows:
        counts = per_source.setdefault(source, {"vetted": now_vetted.get(source, 0), "drawn": 0, "audited": 0,
                                                "unsolvable": 0})
        counts["drawn"] += count
        result["drawn"] += count
        if not is_vetted:
            result["no_longer_vetted"] += count
        elif unsolvable is not None:
            counts["audited"] += count
            counts["unsolvable"] += count * unsolvable
    result["per_source"] = {source: {**counts, **_share(counts["unsolvable"], counts["audited"])}
                            for source, counts in sorted(per_source.items())}
    audited = sum(counts["audited"] for counts in per_source.values())
    unsolvable = sum(counts["unsolvable"] for counts in per_source.values())
    result.update(audited=audited, unsolvable=unsolvable, **_share(unsolvable, audited))
    result["status"] = AUDITED if audited else NOT_AUDITED
    result["model_estimate"] = _model_estimate(session) if with_model else None
    return result


def _model_estimate(session: Session) -> dict[str, Any] | None:
    """The Dawid-Skene estimate of the same share (`precision_estimate`), beside an audit: it refits the model, so
    only a project with an audit sample pays for it."""
    from annotator.labelling.precision_estimate import estimated_unsolvable_share  # numpy's fit, on demand

    model = estimated_unsolvable_share(session)
    if model.share is None:
        return None
    return {"unsolvable_share": model.share, "interval": None, "method": "dawid-skene mean posterior",
            "candidates": model.candidates, "without_labels": model.without_labels}


def describe(estimate: dict[str, Any]) -> str:
    """The estimate in one line: "0.925 truly unsolvable (95% Wilson interval 0.80 to 0.97), 37 of 40 audited, 40
    drawn, seed 7", or "not audited" and why."""
    sample = estimate["sample"]
    if sample is None:
        return f"{NOT_AUDITED} (no audit sample drawn)"
    drawn = f"{estimate['drawn']} drawn by {sample['drawn_by']} on {sample['drawn_at'][:10]}, seed {sample['seed']}"
    if estimate["status"] == NOT_AUDITED:
        return f"{NOT_AUDITED} yet ({drawn}){model_line(estimate)}"
    low, high = estimate["interval"]
    line = (f"{estimate['unsolvable_share']:.3f} truly unsolvable (95% Wilson interval {low:.3f} to {high:.3f}): "
            f"{estimate['unsolvable']} of {estimate['audited']} audited; {drawn}")
    if estimate["no_longer_vetted"]:
        line += f"; {estimate['no_longer_vetted']} sampled no longer vetted, not counted"
    return line + model_line(estimate)


def model_line(estimate: dict[str, Any]) -> str:
    """The model-based estimate beside the audit's ("; model-based estimate 0.910 (0.880 to 0.930)"), or ""."""
    model = estimate.get("model_estimate")
    if not model or model.get("unsolvable_share") is None:
        return ""
    interval = model.get("interval")
    bounds = f" ({interval[0]:.3f} to {interval[1]:.3f})" if interval else ""
    return f"; model-based estimate {model['unsolvable_share']:.3f}{bounds}"


def sample_rows(session: Session) -> list[dict[str, Any]]:
    """The audit sample's candidates in its order, with each decision: data_id, data_source, position, unsolvable,
    comment, audited_by, audited_at, and the sample's id, seed, drawn_by and drawn_at (for the `audit` export)."""
    sample = current_sample(session)
    if sample is None:
        return []
    drawn_by = session.execute(select(Annotator.name).where(Annotator.id == sample.drawn_by)).scalar_one()
    query = (
        select(Candidate.data_id, AuditItem.data_source, AuditItem.position, AuditItem.unsolvable, AuditItem.comment,
               Annotator.name.label("audited_by"), AuditItem.audited_at)
        .join(Candidate, Candidate.id == AuditItem.candidate_id)
        .outerjoin(Annotator, Annotator.id == AuditItem.audited_by)
        .where(AuditItem.sample_id == sample.id)
        .order_by(AuditItem.position)
    )
    about = {"sample": sample.id, "seed": sample.seed, "drawn_by": drawn_by, "drawn_at": sample.drawn_at}
    return [{**row._asdict(), **about} for row in session.execute(query)]
