"""Gold items: candidates whose label an admin knows, mixed into every annotator's queue unannounced.

The queue hands out a gold item at most once in `gold_every` items per annotator (a project setting; 0 turns
gold items off), each gold item once to each annotator, and never as an ordinary candidate. An annotator's
gold accuracy is the share of the gold items they labelled with exactly the gold label.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import and_, case, delete, exists, func, select
from sqlmodel import Session

from annotator.database.models import Annotation, Annotator, Candidate, GoldLabel, utcnow
from annotator.database.queries import bounded_setting, of_source_and_type, set_setting
from annotator.labelling.labels import LabelError, validate
from annotator.settings import limits

GOLD_EVERY = "gold_every"
DEFAULT_GOLD_EVERY = 10

__all__ = ["GOLD_EVERY", "LabelError", "gold_accuracy", "gold_every", "gold_items", "gold_label", "is_gold",
           "mark_gold", "next_gold", "set_gold_every", "unmark_gold"]


def gold_every(session: Session) -> int:
    """At most one gold item in this many items per annotator (0: no gold items in queues)."""
    value = bounded_setting(session, key=GOLD_EVERY, allowed=limits.GOLD_EVERY, default=DEFAULT_GOLD_EVERY)
    return DEFAULT_GOLD_EVERY if value == 1 else int(value)


def set_gold_every(session: Session, *, value: int) -> None:
    limits.GOLD_EVERY.check(value)
    if value == 1:
        raise limits.RangeError(f"gold_every must be 0 (off) or at least 2 (one gold item in N), got {value}")
    set_setting(session, key=GOLD_EVERY, value=value)


def is_gold() -> Any:
    """A condition on `Candidate`: it is a gold item (the queue keeps these out of the ordinary order)."""
    return exists().where(GoldLabel.candidate_id == Candidate.id)


def mark_gold(
    session: Session, *, candidate_id: int, human_check: int, difficulty_eval: int | None, created_by: int | None
) -> None:
    """Make a candidate a gold item with this label (or change its label)."""
    validate(human_check, difficulty_eval)
    gold = session.get(GoldLabel, candidate_id)
    if gold is None:
        session.add(GoldLabel(candidate_id=candidate_id, human_check=human_check, difficulty_eval=difficulty_eval,
                              created_by=created_by, created_at=utcnow()))
    else:
        gold.human_check, gold.difficulty_eval, gold.created_by = human_check, difficulty_eval, created_by
    session.flush()


def gold_label(session: Session, *, candidate_id: int) -> tuple[int, int | None] | None:
    """The candidate's gold label as (human_check, difficulty_eval), or None when it is not a gold item."""
    gold = session.get(GoldLabel, candidate_id)
    return None if gold is None else (gold.human_check, gold.difficulty_eval)


def unmark_gold(session: Session, *, candidate_id: int) -> None:
    session.execute(delete(GoldLabel).where(GoldLabel.candidate_id == candidate_id))


def gold_items(session: Session) -> list[dict[str, Any]]:
    """Every gold item: candidate id, data_id, the gold label, and how many annotators labelled it."""
    labelled = select(func.count()).where(Annotation.candidate_id == GoldLabel.candidate_id).scalar_subquery()
    rows = session.execute(
        select(GoldLabel.candidate_id, Candidate.data_id, GoldLabel.human_check, GoldLabel.difficulty_eval,
               labelled.label("labels"))
        .join(Candidate, Candidate.id == GoldLabel.candidate_id)
        .order_by(Candidate.id)
    )
    return [row._asdict() for row in rows]


def _due(session: Session, *, annotator_id: int, every: int) -> bool:
    """Whether this annotator's last `every - 1` labels hold no gold item (so one may come now)."""
    recent = (
        select(Annotation.candidate_id)
        .where(Annotation.annotator_id == annotator_id)
        .order_by(Annotation.id.desc())
        .limit(every - 1)
        .subquery()
    )
    labelled = session.execute(select(func.count()).select_from(recent)).scalar_one()
    gold_recently = session.execute(
        select(func.count()).select_from(recent).join(GoldLabel, GoldLabel.candidate_id == recent.c.candidate_id)
    ).scalar_one()
    return labelled >= every - 1 and gold_recently == 0


def next_gold(
    session: Session,
    *,
    annotator_id: int,
    exclude: Collection[int] = (),
    data_source: str | None = None,
    rewrite_type: str | None = None,
    due_or_not: bool = False,
) -> int | None:
    """A gold item to hand this annotator now, or None (gold is off, none is left for them among the
    queue's filters, or one came less than `gold_every` items ago; `due_or_not` skips that last rule, for
    when nothing else is left to hand out).

    Which one is random, so that annotators cannot tell gold items by their place in the queue.
    """
    every = gold_every(session)
    if every == 0:
        return None
    mine = exists().where(Annotation.candidate_id == GoldLabel.candidate_id, Annotation.annotator_id == annotator_id)
    query = select(GoldLabel.candidate_id).where(~mine)
    if exclude:
        query = query.where(GoldLabel.candidate_id.not_in(list(exclude)))
    if data_source or rewrite_type:
        query = query.join(Candidate, Candidate.id == GoldLabel.candidate_id)
        query = of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)
    # First whether any is left (one cheap query on a project without gold items), then whether one is due.
    candidate_id = session.execute(query.order_by(func.random()).limit(1)).scalar_one_or_none()
    if candidate_id is None or not (due_or_not or _due(session, annotator_id=annotator_id, every=every)):
        return None
    return candidate_id


def gold_accuracy(session: Session) -> dict[str, dict[str, Any]]:
    """Per annotator who labelled gold items: {name: {"gold_items", "gold_correct", "gold_accuracy"}}, counted by
    the database (a label is correct when its human_check and difficulty_eval, missing or not, are the gold's)."""
    correct = and_(Annotation.human_check == GoldLabel.human_check,
                   Annotation.difficulty_eval.is_not_distinct_from(GoldLabel.difficulty_eval))
    rows = session.execute(
        select(Annotator.name, func.count(), func.sum(case((correct, 1), else_=0)))
        .select_from(Annotation)
        .join(GoldLabel, GoldLabel.candidate_id == Annotation.candidate_id)
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .group_by(Annotator.name)
        .order_by(Annotator.name)
    )
    return {name: {"gold_items": items, "gold_correct": int(right), "gold_accuracy": int(right) / items}
            for name, items, right in rows}
