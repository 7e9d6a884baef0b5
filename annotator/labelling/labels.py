"""Recording `human_check` / `difficulty_eval` labels and resolving a candidate's label from them.

Every label and every reviewer's decision is written by one function, `record_labels`, which takes a list: a
keypress (`record_label`, a list of one), an import or an Excel batch (thousands), an adjudication (a decision
row). It writes the labels, their events (the append-only history) and each touched candidate's resolved label
in a few set-based statements per chunk of rows, and is the one place that says what a change is: a label or comment
that differs is an event, time spent adds up, and the resolved label and its provenance (`label_source`) are
computed in SQL, one statement for all the touched candidates (`_label_writer`, the set-based work behind
this module).

A candidate's resolved label is kept on the candidate row (`label_count`, `human_check`, `difficulty_eval`,
`label_source`) and updated in the same transaction as every label change, so queues, statistics and exports
read one indexed table.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Annotation, Annotator
from annotator.database.queries import people_labels_query
from annotator.database.vocabulary import Label, LabelError
from annotator.labelling import _label_writer, adaptive, label_days

__all__ = [
    "LabelConflict",
    "LabelError",
    "LabelRow",
    "activity",
    "label_rows",
    "record_label",
    "record_labels",
    "validate",
]

# The labels there are (`vocabulary.Label`): checked by a set lookup, the rules' own error only on a miss.
_LABELS = frozenset({(0, None), (1, 0), (1, 1)})


def validate(human_check: int, difficulty_eval: int | None) -> None:
    """Raises `LabelError` when (human_check, difficulty_eval) is not a label (see `vocabulary.Label`)."""
    Label(human_check, difficulty_eval)


class LabelRow(NamedTuple):
    """One label to record (see `record_labels`): an annotator's, or with `decision` a reviewer's adjudication
    of the candidate (kept in `adjudication`; it wins over the annotators' labels)."""

    candidate_id: int
    annotator_id: int
    human_check: int
    difficulty_eval: int | None
    comment: str | None = None
    seconds_spent: float | None = None  # added to the time already spent on the label
    decision: bool = False
    decision_id: str | None = None  # made in the browser; the event names it
    pressed_at: datetime | None = None  # the key's time: the event's, else the time of writing


class LabelConflict(ValueError):
    """`rows[index]` would change what is stored and replacing was not asked for: a different label or comment
    (`field` says which), or for a decision another reviewer's (`annotator_id`)."""

    def __init__(self, index: int, stored: Any, *, field: str) -> None:
        super().__init__(f"label {index} conflicts with (human_check {stored.human_check}, difficulty_eval "
                         f"{stored.difficulty_eval}, comment {stored.comment!r})")
        self.index, self.field, self.annotator_id, self.comment = index, field, stored.annotator_id, stored.comment
        self.human_check, self.difficulty_eval = stored.human_check, stored.difficulty_eval


def record_labels(session: Session, *, rows: Sequence[LabelRow], replace: bool = False,
                  keep_comments: bool = False, unlabelled: Collection[int] = ()) -> tuple[int, int]:
    """Record these labels and decisions: the labels, their events and the touched candidates' resolved labels,
    in a few set-based statements per chunk of rows. Returns (added, updated) labels and decisions.

    A row equal to what is stored (label and comment) changes nothing but adds its `seconds_spent`. One that
    differs is an "update" event (a comment alone too) and, unless `replace`, a `LabelConflict`; a decision
    conflicts when another reviewer's is stored. With `keep_comments` a row without a comment keeps the stored
    one (an import names only the comments it has); else it clears it (a keypress says the whole label). Call
    inside `write_session()`; a (candidate, annotator) pair, and a candidate among decisions, at most once.
    `unlabelled`: candidates among the rows' that the caller knows to hold no label or decision (read under the
    lock of this transaction, or made in it), not looked up again.
    """
    for row in rows:
        pair = (row.human_check, row.difficulty_eval)
        if pair not in _LABELS or type(pair[0]) is bool or type(pair[1]) is bool:  # True == 1 to a set
            validate(*pair)
    session.flush()  # ORM objects the caller added go first: what follows runs on the connection
    stored = _label_writer.stored(session, rows=rows, unlabelled=unlabelled)
    plan = _label_writer.Plan(replace=replace, keep_comments=keep_comments)
    if not stored.labels and not stored.decisions and not any(row.decision for row in rows):
        # Nothing stored to compare with (an import's labels on unlabelled candidates).
        plan.add_new(rows, alone=_label_writer.alone(session, rows=rows, labelled=stored.labelled,
                                                     unlabelled=unlabelled))
    else:
        for index, row in enumerate(rows):
            conflict = plan.add(row, stored.decisions.get(row.candidate_id) if row.decision
                                else stored.labels.get((row.candidate_id, row.annotator_id)))
            if conflict is not None:
                raise LabelConflict(index, conflict[0], field=conflict[1])
    changed = plan.candidate_ids()
    plan.write(session)
    if changed:
        adaptive.after_labels(session, candidate_ids=changed)
    return plan.added, plan.updated


def record_label(
    session: Session,
    *,
    candidate_id: int,
    annotator_id: int,
    human_check: int,
    difficulty_eval: int | None,
    comment: str | None = None,
    seconds_spent: float | None = None,
    decision_id: str | None = None,
    pressed_at: datetime | None = None,
) -> None:
    """One annotator's label on one candidate as they gave it (a keypress): `record_labels` with one row, a
    change replacing the stored label, no comment clearing one. Call inside `write_session()`."""
    row = LabelRow(candidate_id, annotator_id, human_check, difficulty_eval, comment, seconds_spent,
                   decision_id=decision_id, pressed_at=pressed_at)
    record_labels(session, rows=[row], replace=True)


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
    query = _labels_query(Annotator.name, data_source=data_source, rewrite_type=rewrite_type,
                          system_annotators=system_annotators)
    return [tuple(row) for row in session.execute(query)]  # type: ignore[misc]


def _labels_query(who: Any, *, data_source: str | None, rewrite_type: str | None,
                  system_annotators: Collection[str]) -> Any:
    return people_labels_query(Annotation.candidate_id, who, Annotation.human_check, Annotation.difficulty_eval,
                               Annotation.seconds_spent, data_source=data_source, rewrite_type=rewrite_type,
                               system_annotators=system_annotators)


def activity(session: Session) -> dict[str, dict[str, Any]]:
    """Per person (system annotators left out): labels, time spent on them, labels per hour of that time, and
    labels per day (`{"labels", "seconds", "per_hour", "per_day": {date: n}}`), from the counts the database keeps
    per annotator and day (`label_days`)."""
    names = dict(session.execute(select(Annotator.id, Annotator.name).where(Annotator.is_system.is_(False))).all())
    people: dict[str, dict[str, Any]] = {}
    for name, day, count, seconds in sorted((names[who], day, count, seconds)
                                            for who, day, count, seconds in label_days.per_day(session)
                                            if who in names):
        person = people.setdefault(name, {"labels": 0, "seconds": 0.0, "per_day": {}})
        person["labels"] += count
        person["seconds"] += seconds
        person["per_day"][day] = count
    for person in people.values():
        person["per_hour"] = person["labels"] / (person["seconds"] / 3600) if person["seconds"] else None
    return people
