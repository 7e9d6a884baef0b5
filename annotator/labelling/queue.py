"""The annotator's queue: which candidate to show next, recording decisions, going back, progress.

Every call here is a few indexed queries, whatever the size of the database:

- the next candidate walks `ix_candidate_queue` (status, label_count, id) in order and stops at the first
  one that this annotator has not labelled (unique index on annotation (candidate_id, annotator_id)) and
  that is not already handed to enough other annotators (claims, primary key (candidate_id, annotator_id));
- going back walks this annotator's own annotations by id (index on annotation.annotator_id).

A candidate handed out is *claimed* for `CLAIM_MINUTES`: with `labels_per_candidate` = N the queue never
has more than N annotators labelling or holding one candidate, so two people do not get the same task. Labels
that came with an import (a system annotator's, e.g. the release's own) fill those N or not, as the project's
`imported_labels_count` says (`label_target`).
An annotator holds the candidate on screen and the next few the browser has ready (`browser_queue`), which is
also how a reloaded page resumes on the same candidates; the claims of an Excel batch (`annotator.labelling.batches`,
`CandidateClaim.batch` set) count the same way but are left alone by the browser queue, and their candidates are not
offered to their holder here.
Call the functions that write inside `write_session()` (on SQLite that is `BEGIN IMMEDIATE`, which
makes "find the next one and claim it" atomic; on PostgreSQL the candidate row is locked with
`FOR UPDATE SKIP LOCKED` and checked again under the lock).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, delete, exists, false, func, literal, or_, select
from sqlmodel import Session

from annotator.database.models import Annotation, Annotator, Candidate, CandidateClaim, CandidateStatus, utcnow
from annotator.database.queries import (
    CANDIDATE_COLUMNS,
    LabelTarget,
    bounded_setting,
    candidates_query,
    complete,
    counted_labels,
    enough_labels,
    get_setting,
    of_source_and_type,
    original_question_and_answer,
    set_setting,
)
from annotator.database.vocabulary import LabelSource, VettedRule
from annotator.labelling import adaptive
from annotator.labelling.gold import is_gold, next_gold
from annotator.labelling.labels import record_label
from annotator.settings import limits

LABELS_PER_CANDIDATE = "labels_per_candidate"
IMPORTED_LABELS_COUNT = "imported_labels_count"
CLAIM_MINUTES = 30

# What the annotate and browse pages show of a candidate: the store's candidate row and the model outputs.
VIEW_COLUMNS = (*CANDIDATE_COLUMNS, Candidate.llm_outputs)


def labels_per_candidate(session: Session) -> int:
    """How many annotators label each candidate (project setting, default 1)."""
    return int(bounded_setting(session, key=LABELS_PER_CANDIDATE, allowed=limits.LABELS_PER_CANDIDATE, default=1))


def set_labels_per_candidate(session: Session, *, value: int) -> None:
    limits.LABELS_PER_CANDIDATE.check(value)
    set_setting(session, key=LABELS_PER_CANDIDATE, value=value)


def imported_labels_count(session: Session) -> bool:
    """Whether labels that came with an import or a pipeline (a system annotator's, e.g. "import:reliablemath")
    fill `labels_per_candidate` (project setting, default yes: a release imported alone is vetted as released).
    A stored value that is not true or false counts as the default."""
    value = get_setting(session, key=IMPORTED_LABELS_COUNT, default=True)
    return value if isinstance(value, bool) else True


def set_imported_labels_count(session: Session, *, value: bool) -> None:
    set_setting(session, key=IMPORTED_LABELS_COUNT, value=bool(value))


def label_importers(session: Session) -> list[str]:
    """The system annotators (imports, pipelines) that gave labels, by name (one index lookup each)."""
    system = session.execute(select(Annotator.id, Annotator.name).where(Annotator.is_system.is_(True))).all()
    return sorted(name for annotator_id, name in system
                  if session.execute(select(Annotation.id).where(Annotation.annotator_id == annotator_id).limit(1))
                  .first() is not None)


def label_target(session: Session) -> LabelTarget:
    """What makes a candidate complete: the project's `labels_per_candidate` (with adaptive overlap on, its most
    labels; fewer complete one that they settle: `Candidate.settled`, `adaptive`) and `imported_labels_count`."""
    labels = adaptive.overlap(session).max_labels if adaptive.adaptive_on(session) else labels_per_candidate(session)
    return LabelTarget(labels, imported_labels_count(session))


def labels_wanted(labels: int, *, count_imported: bool) -> str:
    """What a complete candidate has, in words: "2 label(s)", or "2 label(s) besides imported ones"."""
    return f"{labels} label(s)" + ("" if count_imported else " besides imported ones")


def vetted(target: LabelTarget, *, rule: VettedRule = VettedRule.complete_or_adjudicated) -> ColumnElement[bool]:
    """Whether a candidate is vetted: the one rule the release, `stats`, the Overview and manifests use.

    A candidate is vetted when its resolved label is human_check = 1 and it is complete (`target`:
    `label_target`) or adjudicated; `VettedRule.include_incomplete` also takes those whose fewer labels so far
    resolve to human_check = 1.
    """
    resolved_to_1 = Candidate.human_check == 1
    if rule == VettedRule.include_incomplete:
        return resolved_to_1
    return and_(resolved_to_1, _complete_or_adjudicated(target))


def incomplete(target: LabelTarget) -> ColumnElement[bool]:
    """Resolved to human_check = 1 so far, but neither complete nor adjudicated: not vetted yet."""
    return and_(Candidate.human_check == 1, ~_complete_or_adjudicated(target))


def _complete_or_adjudicated(target: LabelTarget) -> ColumnElement[bool]:
    # label_source is NULL while unresolved: coalesced, so that the negation is true there, not NULL.
    return or_(complete(target), func.coalesce(Candidate.label_source, "") == LabelSource.adjudicated.value)


def _statuses(include_filtered: bool) -> list[str]:
    return [CandidateStatus.pending, CandidateStatus.filtered] if include_filtered else [CandidateStatus.pending]


def _labelled_by(annotator_id: int) -> Any:
    return exists().where(Annotation.candidate_id == Candidate.id, Annotation.annotator_id == annotator_id)


def next_candidate_query(
    session: Session,
    *,
    annotator_id: int,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    include_filtered: bool = False,
    exclude: Collection[int] = (),
    now: datetime | None = None,
) -> Select[tuple[int]]:
    """The query behind `next_candidate_id` (tests explain it)."""
    now = now or utcnow()
    one_at_a_time = adaptive.adaptive_on(session)
    target = label_target(session)
    statuses = _statuses(include_filtered)
    query = select(Candidate.id).where(
        Candidate.status.in_(statuses) if len(statuses) > 1 else Candidate.status == statuses[0],
        ~enough_labels(target),  # label_count < target (the index's order), imported labels taken off or not
        ~Candidate.settled,
        ~_labelled_by(annotator_id),
    )
    held_by_others = (
        CandidateClaim.candidate_id == Candidate.id,
        CandidateClaim.annotator_id != annotator_id,
        CandidateClaim.expires_at > now,
    )
    if target.labels == 1 or one_at_a_time:
        # With one label per candidate a single claim by someone else is enough; NOT EXISTS stops at it. With
        # adaptive overlap one label at a time: whether a candidate needs the next is known once the last is in.
        query = query.where(~exists().where(*held_by_others))
    else:
        holding = select(func.count()).where(*held_by_others).scalar_subquery()
        query = query.where(counted_labels(target) + holding < literal(target.labels))
    # The candidates of this annotator's own Excel batches wait in her sheet.
    query = query.where(~exists().where(*_own_batch_claim(annotator_id, now)))
    if exclude:
        query = query.where(Candidate.id.not_in(list(exclude)))
    query = query.where(~is_gold())  # gold items come through `gold.next_gold`, one in N
    query = of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)
    # Fewest labels first, then import order: the order of ix_candidate_queue, so no sort.
    return query.order_by(Candidate.label_count, Candidate.id).limit(1)


def _own_batch_claim(annotator_id: int, now: datetime) -> tuple[ColumnElement[bool], ...]:
    return (
        CandidateClaim.candidate_id == Candidate.id,
        CandidateClaim.annotator_id == annotator_id,
        CandidateClaim.batch.is_not(None),
        CandidateClaim.expires_at > now,
    )


def next_candidate_id(session: Session, *, lock: bool = False, **criteria: Any) -> int | None:
    """The first candidate this annotator has not labelled that still needs labels, or None.

    `criteria` are `next_candidate_query`'s; `lock` takes the row lock (PostgreSQL, SKIP LOCKED).
    """
    query = next_candidate_query(session, **criteria)
    if lock:
        query = query.with_for_update(skip_locked=True, of=Candidate)
    return session.execute(query).scalar_one_or_none()


def claimed_candidate_id(
    session: Session,
    *,
    annotator_id: int,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    now: datetime | None = None,
) -> int | None:
    """The candidate this annotator holds (was shown and has not labelled yet), if it matches the filters."""
    query = (
        select(Candidate.id)
        .join(CandidateClaim, CandidateClaim.candidate_id == Candidate.id)
        .where(CandidateClaim.annotator_id == annotator_id, CandidateClaim.expires_at > (now or utcnow()))
        .where(CandidateClaim.batch.is_(None))
        .where(~_labelled_by(annotator_id))
    )
    query = of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)
    return session.execute(query.limit(1)).scalar_one_or_none()


def claim(session: Session, *, annotator_id: int, candidate_id: int, now: datetime | None = None,
          keep_held: bool = False) -> None:
    """Hold `candidate_id` for this annotator (and give up any other candidate they held in the browser, unless
    `keep_held`: the browser's queue holds the next few, `browser_queue`)."""
    now = now or utcnow()
    # An expired batch claim on this candidate would clash with the new one's primary key.
    others = false() if keep_held else CandidateClaim.batch.is_(None)
    session.execute(
        delete(CandidateClaim).where(
            CandidateClaim.annotator_id == annotator_id, or_(others, CandidateClaim.candidate_id == candidate_id)
        )
    )
    session.add(
        CandidateClaim(
            candidate_id=candidate_id, annotator_id=annotator_id, expires_at=now + timedelta(minutes=CLAIM_MINUTES)
        )
    )
    session.flush()


def release(session: Session, *, annotator_id: int, candidate_id: int | None = None) -> None:
    """Give up a held candidate (every browser claim when `candidate_id` is None: batch claims stay), e.g.
    on skip or sign-out."""
    query = delete(CandidateClaim).where(CandidateClaim.annotator_id == annotator_id)
    if candidate_id is not None:
        query = query.where(CandidateClaim.candidate_id == candidate_id)
    else:
        query = query.where(CandidateClaim.batch.is_(None))
    session.execute(query)


def release_labelled(session: Session, *, labels: Collection[tuple[int, int]]) -> None:
    """Give up the claims (browser or batch) on these (candidate id, annotator id) pairs: they are labelled."""
    by_annotator: dict[int, list[int]] = {}
    for candidate_id, annotator_id in labels:
        by_annotator.setdefault(annotator_id, []).append(candidate_id)
    for annotator_id, candidate_ids in by_annotator.items():
        for start in range(0, len(candidate_ids), 900):  # well under SQLite's limit on bound parameters
            session.execute(
                delete(CandidateClaim).where(
                    CandidateClaim.annotator_id == annotator_id,
                    CandidateClaim.candidate_id.in_(candidate_ids[start : start + 900]),
                )
            )


def claim_next(
    session: Session,
    *,
    annotator_id: int,
    exclude: Collection[int] = (),
    now: datetime | None = None,
    keep_held: bool = False,
    **queue_filters: Any,
) -> int | None:
    """The candidate to show: the one this annotator already holds (resume), else the next one, claimed.

    `queue_filters` are `next_candidate_query`'s `data_source`, `rewrite_type` and `include_filtered`. With
    `keep_held` the next one is claimed besides those held (the caller excludes them), and nothing is released.
    """
    now = now or utcnow()
    held = None if keep_held else claimed_candidate_id(
        session,
        annotator_id=annotator_id,
        data_source=queue_filters.get("data_source"),
        rewrite_type=queue_filters.get("rewrite_type"),
        now=now,
    )
    if held is not None and held not in exclude:
        return held
    gold_filters = {"exclude": exclude, "data_source": queue_filters.get("data_source"),
                    "rewrite_type": queue_filters.get("rewrite_type")}
    gold = next_gold(session, annotator_id=annotator_id, **gold_filters)
    if gold is not None:
        claim(session, annotator_id=annotator_id, candidate_id=gold, now=now, keep_held=keep_held)
        return gold
    filters: dict[str, Any] = {"annotator_id": annotator_id, "now": now, **queue_filters}
    if session.get_bind().dialect.name != "postgresql":
        # SQLite: write_session's BEGIN IMMEDIATE already serialises "find the next one and claim it".
        candidate_id = next_candidate_id(session, exclude=exclude, **filters)
    else:
        candidate_id = _lock_next_open(session, exclude=exclude, filters=filters)
    if candidate_id is None:  # nothing ordinary left: the gold items this annotator has not seen yet
        candidate_id = next_gold(session, annotator_id=annotator_id, due_or_not=True, **gold_filters)
    if candidate_id is None:
        if not keep_held:
            release(session, annotator_id=annotator_id)
    else:
        claim(session, annotator_id=annotator_id, candidate_id=candidate_id, now=now, keep_held=keep_held)
    return candidate_id


def _lock_next_open(session: Session, *, exclude: Collection[int], filters: dict[str, Any]) -> int | None:
    """PostgreSQL: lock the next open candidate's row and make sure, under the lock, that it is still open.

    `FOR UPDATE SKIP LOCKED` alone is not enough under READ COMMITTED: when another annotator claimed the
    candidate and committed while this query ran, the row lock is free again but the query's snapshot
    still shows no claim. Everyone who claims or labels a candidate holds its row lock first, so once this
    transaction holds it, a fresh statement (a fresh snapshot) sees every claim and label there is.
    """
    passed: list[int] = []
    while True:
        candidate_id = next_candidate_id(session, exclude=[*exclude, *passed], lock=True, **filters)
        if candidate_id is None:
            return None
        still_open = next_candidate_query(session, **filters).where(Candidate.id == candidate_id)
        if session.execute(still_open).scalar_one_or_none() is not None:
            return candidate_id
        passed.append(candidate_id)


def decide(
    session: Session,
    *,
    annotator_id: int,
    candidate_id: int,
    human_check: int,
    difficulty_eval: int | None,
    comment: str | None = None,
    seconds_spent: float | None = None,
    decision_id: str | None = None,
    pressed_at: datetime | None = None,
) -> None:
    """Record this annotator's label (a create or update event) and give up the claim on the candidate.

    `decision_id` and `pressed_at` (a decision sent from the browser, `browser_queue`) go on its event."""
    record_label(
        session,
        candidate_id=candidate_id,
        annotator_id=annotator_id,
        human_check=human_check,
        difficulty_eval=difficulty_eval,
        comment=comment or None,
        seconds_spent=seconds_spent,
        decision_id=decision_id,
        pressed_at=pressed_at,
    )
    release(session, annotator_id=annotator_id, candidate_id=candidate_id)


def _my_annotation_id(session: Session, *, annotator_id: int, candidate_id: int) -> int | None:
    return session.execute(
        select(Annotation.id).where(Annotation.candidate_id == candidate_id, Annotation.annotator_id == annotator_id)
    ).scalar_one_or_none()


def previous_labelled(session: Session, *, annotator_id: int, before_candidate_id: int | None = None) -> int | None:
    """The candidate this annotator labelled just before `before_candidate_id` (their latest when None).

    "Before" is the order in which they first labelled candidates; when `before_candidate_id` is not one
    they labelled (it is the queue's current candidate) the latest label is the previous one.
    """
    query = select(Annotation.candidate_id).where(Annotation.annotator_id == annotator_id)
    if before_candidate_id is not None:
        mine = _my_annotation_id(session, annotator_id=annotator_id, candidate_id=before_candidate_id)
        if mine is not None:
            query = query.where(Annotation.id < mine)
    return session.execute(query.order_by(Annotation.id.desc()).limit(1)).scalar_one_or_none()


def next_labelled(session: Session, *, annotator_id: int, after_candidate_id: int) -> int | None:
    """The candidate this annotator labelled just after `after_candidate_id`, or None (back to the queue)."""
    mine = _my_annotation_id(session, annotator_id=annotator_id, candidate_id=after_candidate_id)
    if mine is None:
        return None
    query = select(Annotation.candidate_id).where(Annotation.annotator_id == annotator_id, Annotation.id > mine)
    return session.execute(query.order_by(Annotation.id).limit(1)).scalar_one_or_none()


def load(session: Session, *, candidate_id: int, annotator_id: int) -> dict[str, Any] | None:
    """What the page shows of one candidate: its fields, its problem's, and this annotator's own label.

    `question` / `ground_truth` fall back to the problem's when the candidate has none of its own.
    """
    row = session.execute(
        candidates_query(columns=VIEW_COLUMNS, order="id").where(Candidate.id == candidate_id)
    ).first()
    if row is None:
        return None
    view = row._asdict()
    view["question"], view["ground_truth"] = original_question_and_answer(view)
    mine = session.execute(
        select(Annotation.human_check, Annotation.difficulty_eval, Annotation.comment).where(
            Annotation.candidate_id == candidate_id, Annotation.annotator_id == annotator_id
        )
    ).first()
    view["my_label"] = None if mine is None else mine._asdict()
    return view


def filter_options(session: Session) -> dict[str, list[str]]:
    """The data sources and rewrite types that occur (from ix_candidate_source_type)."""
    pairs = session.execute(select(Candidate.data_source, Candidate.rewrite_type).distinct()).all()
    return {
        "data_source": sorted({pair[0] for pair in pairs}),
        "rewrite_type": sorted({pair[1] for pair in pairs}),
    }
