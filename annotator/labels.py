"""Recording `human_check` / `difficulty_eval` labels and resolving a candidate's label from them.

A candidate's resolved label is kept on the candidate row (`label_count`, `human_check`,
`difficulty_eval`) and updated in the same transaction as every label change, so queues, statistics and
exports read one indexed table.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

from sqlalchemy import bindparam, func, insert, or_, select, update
from sqlmodel import Session

from annotator.models import Adjudication, Annotation, AnnotationEvent, Annotator, Candidate, utcnow
from annotator.store import execute_many, iter_raw_tuples, of_source_and_type
from annotator.vocabulary import Label, LabelError, LabelSource

__all__ = [
    "LabelConflict",
    "LabelError",
    "LabelRow",
    "activity",
    "label_rows",
    "label_source",
    "record_label",
    "record_labels",
    "refresh_candidates",
    "resolve",
    "validate",
]

# Ids per IN (...) list: well under SQLite's limit on bound parameters.
_IN_BATCH = 900


def validate(human_check: int, difficulty_eval: int | None) -> None:
    """Raises `LabelError` when (human_check, difficulty_eval) is not a label (see `vocabulary.Label`)."""
    Label(human_check, difficulty_eval)


def resolve(values: Sequence[tuple[int, int | None]]) -> tuple[int | None, int | None]:
    """The resolved (human_check, difficulty_eval) of a candidate from its labels.

    Majority vote on human_check; a tie leaves it unresolved (None), to be adjudicated. Among the labels
    that accept the candidate, majority vote on difficulty_eval; a tie counts as hard (1), since at least
    half of those annotators found it hard to see that the problem is unsolvable.
    """
    if not values:
        return None, None
    accepted = [difficulty for check, difficulty in values if check == 1]
    rejected = len(values) - len(accepted)
    if len(accepted) == rejected:
        return None, None
    if rejected > len(accepted):
        return 0, None
    hard = sum(1 for difficulty in accepted if difficulty == 1)
    return 1, 1 if 2 * hard >= len(accepted) else 0


def label_source(values: Sequence[tuple[int, int | None]], resolved: tuple[int | None, int | None]) -> str | None:
    """Where a resolved label over these labels comes from (`LabelSource`); None while unresolved."""
    if resolved[0] is None:
        return None
    if len(values) == 1:
        return LabelSource.single
    return LabelSource.unanimous if len(set(values)) == 1 else LabelSource.majority


def _snapshot(annotation: Any) -> dict[str, object]:
    """What an event records of a label (an `Annotation`, or a row with the same columns)."""
    return {
        "human_check": annotation.human_check,
        "difficulty_eval": annotation.difficulty_eval,
        "comment": annotation.comment,
    }


def refresh_candidate(session: Session, *, candidate_id: int) -> None:
    """Store the candidate's resolved label (`resolve` over all its labels) and its label count."""
    refresh_candidates(session, candidate_ids=(candidate_id,))


def refresh_candidates(session: Session, *, candidate_ids: Collection[int]) -> None:
    """`refresh_candidate` for many candidates at once: one read of their labels and one executemany per
    batch (a bulk label import touches thousands; a keypress one)."""
    ids = sorted(set(candidate_ids))
    for start in range(0, len(ids), _IN_BATCH):
        chunk = ids[start : start + _IN_BATCH]
        values: dict[int, list[tuple[int, int | None]]] = {candidate_id: [] for candidate_id in chunk}
        rows = session.execute(
            select(Annotation.candidate_id, Annotation.human_check, Annotation.difficulty_eval).where(
                Annotation.candidate_id.in_(chunk)
            )
        )
        for candidate_id, human_check, difficulty_eval in rows:
            values[candidate_id].append((human_check, difficulty_eval))
        _store_resolved(session, values=values)


def _adjudicated(session: Session, candidate_ids: Collection[int]) -> dict[int, tuple[int, int | None]]:
    """The reviewers' decisions on these candidates (most have none)."""
    ids = sorted(set(candidate_ids))
    decided: dict[int, tuple[int, int | None]] = {}
    for start in range(0, len(ids), _IN_BATCH):
        query = select(Adjudication.candidate_id, Adjudication.human_check, Adjudication.difficulty_eval).where(
            Adjudication.candidate_id.in_(ids[start : start + _IN_BATCH])
        )
        decided.update({row[0]: (row[1], row[2]) for row in session.execute(query)})
    return decided


def _store_resolved(session: Session, *, values: dict[int, list[tuple[int, int | None]]]) -> None:
    """Write each candidate's label count, resolved label and its source, given all its labels in `values`."""
    adjudicated = _adjudicated(session, values)
    now = utcnow()
    updates = []
    for candidate_id, labels in values.items():
        if candidate_id in adjudicated:  # a reviewer's decision wins over the labels
            resolved, source = adjudicated[candidate_id], LabelSource.adjudicated
        else:
            resolved = resolve(labels)
            source = label_source(labels, resolved)
        updates.append(
            {"b_id": candidate_id, "label_count": len(labels), "human_check": resolved[0],
             "difficulty_eval": resolved[1], "label_source": source, "updated_at": now}
        )
    table = Candidate.__table__
    execute_many(session, update(table).where(table.c.id == bindparam("b_id")), updates)


def record_label(
    session: Session,
    *,
    candidate_id: int,
    annotator_id: int,
    human_check: int,
    difficulty_eval: int | None,
    comment: str | None = None,
    seconds_spent: float | None = None,
) -> Annotation:
    """Create or change one annotator's label on one candidate, append the event, refresh the candidate.

    Call inside `db.write_session()` so that the read and the writes are one transaction.
    """
    validate(human_check, difficulty_eval)
    # Lock the candidate first: on PostgreSQL (READ COMMITTED) two annotators labelling one candidate at
    # once would otherwise each count the other's label as missing and store a short label_count. SQLite's
    # write_session already holds the database's write lock (BEGIN IMMEDIATE); there this is a plain read.
    session.execute(select(Candidate.id).where(Candidate.id == candidate_id).with_for_update())
    annotation = session.execute(
        select(Annotation).where(Annotation.candidate_id == candidate_id, Annotation.annotator_id == annotator_id)
    ).scalar_one_or_none()
    now = utcnow()
    if annotation is None:
        old = None
        annotation = Annotation(
            candidate_id=candidate_id,
            annotator_id=annotator_id,
            human_check=human_check,
            difficulty_eval=difficulty_eval,
            comment=comment,
            seconds_spent=seconds_spent,
            created_at=now,
            updated_at=now,
        )
        session.add(annotation)
    else:
        old = _snapshot(annotation)
        annotation.human_check = human_check
        annotation.difficulty_eval = difficulty_eval
        annotation.comment = comment
        if seconds_spent is not None:
            annotation.seconds_spent = (annotation.seconds_spent or 0) + seconds_spent
        annotation.updated_at = now
    new = _snapshot(annotation)
    if old == new:
        return annotation
    session.add(
        AnnotationEvent(
            candidate_id=candidate_id,
            annotator_id=annotator_id,
            action="create" if old is None else "update",
            old=old,
            new=new,
            at=now,
        )
    )
    session.flush()
    refresh_candidate(session, candidate_id=candidate_id)
    return annotation


def label_rows(
    session: Session,
    *,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    system_annotators: Collection[str] = (),
) -> list[tuple[int, str, int, int | None, float | None]]:
    """Every label as (candidate id, annotator name, human_check, difficulty_eval, seconds_spent).

    System annotators (imports, pipelines) are left out unless named in `system_annotators`.
    """
    query = (
        select(
            Annotation.candidate_id,
            Annotator.name,
            Annotation.human_check,
            Annotation.difficulty_eval,
            Annotation.seconds_spent,
        )
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .where(or_(Annotator.is_system.is_(False), Annotator.name.in_(list(system_annotators))))
        .order_by(Annotation.candidate_id, Annotation.id)
    )
    if data_source or rewrite_type:
        query = query.join(Candidate, Candidate.id == Annotation.candidate_id)
        query = of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)
    return [tuple(row) for row in session.execute(query)]  # type: ignore[misc]


class LabelRow(NamedTuple):
    """One label to record in bulk (see `record_labels`)."""

    candidate_id: int
    annotator_id: int
    human_check: int
    difficulty_eval: int | None
    comment: str | None = None


class LabelConflict(ValueError):
    """`rows[index]` would change a label already in the database and replacing was not asked for."""

    def __init__(self, index: int, human_check: int, difficulty_eval: int | None) -> None:
        super().__init__(f"label {index} conflicts with (human_check {human_check}, difficulty_eval {difficulty_eval})")
        self.index, self.human_check, self.difficulty_eval = index, human_check, difficulty_eval


class _StoredLabel(NamedTuple):
    id: int
    candidate_id: int
    annotator_id: int
    human_check: int
    difficulty_eval: int | None
    comment: str | None


_STORED_COLUMNS = (Annotation.id, Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check,
                   Annotation.difficulty_eval, Annotation.comment)


def _stored_labels(session: Session, candidate_ids: Collection[int]) -> dict[tuple[int, int], _StoredLabel]:
    """The labels already on these candidates by (candidate, annotator), their rows locked first."""
    ids = sorted(set(candidate_ids))
    current: dict[tuple[int, int], _StoredLabel] = {}
    for start in range(0, len(ids), _IN_BATCH):
        chunk = ids[start : start + _IN_BATCH]
        # Lock the candidates first, in id order, as `record_label` does (PostgreSQL; see there).
        session.execute(select(Candidate.id).where(Candidate.id.in_(chunk)).order_by(Candidate.id).with_for_update())
        query = select(*_STORED_COLUMNS).where(Annotation.candidate_id.in_(chunk))
        current.update({(row[1], row[2]): _StoredLabel(*row) for row in iter_raw_tuples(session, query)})
    return current


def record_labels(session: Session, *, rows: Sequence[LabelRow], replace: bool = False) -> tuple[int, int]:
    """`record_label` for many labels at once, set-based: the labels, their events and the candidates'
    resolved labels in a few statements per batch. Returns (added, updated).

    A label equal to the one stored (human_check and difficulty_eval) changes nothing; one that differs is a
    `LabelConflict` unless `replace`. Call inside `db.write_session()`; (candidate, annotator) pairs must be
    unique in `rows`.
    """
    for row in rows:
        validate(row.human_check, row.difficulty_eval)
    current = _stored_labels(session, [row.candidate_id for row in rows])
    now = utcnow()
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        stored = current.get((row.candidate_id, row.annotator_id))
        new = {"human_check": row.human_check, "difficulty_eval": row.difficulty_eval, "comment": row.comment}
        old = None if stored is None else _snapshot(stored)
        if old is not None and (old["human_check"], old["difficulty_eval"]) == (row.human_check, row.difficulty_eval):
            continue
        if stored is not None and not replace:
            raise LabelConflict(index, stored.human_check, stored.difficulty_eval)
        if stored is None:
            inserts.append({"candidate_id": row.candidate_id, "annotator_id": row.annotator_id, **new,
                            "created_at": now, "updated_at": now})
        else:
            updates.append({"b_id": stored.id, **new, "updated_at": now})
        events.append({"candidate_id": row.candidate_id, "annotator_id": row.annotator_id, "at": now,
                       "action": "create" if old is None else "update", "old": old, "new": new})
    table = Annotation.__table__
    execute_many(session, insert(table), inserts)
    execute_many(session, update(table).where(table.c.id == bindparam("b_id")), updates)
    execute_many(session, insert(AnnotationEvent.__table__), events)
    # Every label of the changed candidates is known here (`current` holds them all, locked): resolve from
    # that instead of reading them back.
    changed = {event["candidate_id"] for event in events}
    final = {key: (row.human_check, row.difficulty_eval) for key, row in current.items() if key[0] in changed}
    final.update({(e["candidate_id"], e["annotator_id"]): (e["new"]["human_check"], e["new"]["difficulty_eval"])
                  for e in events})
    values: dict[int, list[tuple[int, int | None]]] = {candidate_id: [] for candidate_id in changed}
    for (candidate_id, _annotator_id), label in final.items():
        values[candidate_id].append(label)
    _store_resolved(session, values=values)
    return len(inserts), len(updates)


def activity(session: Session) -> dict[str, dict[str, Any]]:
    """Per person (system annotators left out): labels, time spent on them, labels per hour of that time, and
    labels per day (`{"labels", "seconds", "per_hour", "per_day": {date: n}}`)."""
    day = func.date(Annotation.created_at).label("day")
    query = (
        select(Annotator.name, day, func.count(), func.sum(Annotation.seconds_spent))
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .where(Annotator.is_system.is_(False))
        .group_by(Annotator.name, day)
        .order_by(Annotator.name, day)
    )
    people: dict[str, dict[str, Any]] = {}
    for name, date, count, seconds in session.execute(query):
        person = people.setdefault(name, {"labels": 0, "seconds": 0.0, "per_day": {}})
        person["labels"] += count
        person["seconds"] += seconds or 0.0
        person["per_day"][str(date)] = count
    for person in people.values():
        person["per_hour"] = person["labels"] / (person["seconds"] / 3600) if person["seconds"] else None
    return people
