"""Adjudication: a reviewer settles the candidates whose labels disagree.

A dispute is a candidate with at least two labels that are not all the same (a tie on `human_check` is one
too); the queue shows the lowest agreement first (the share of labels equal to the most common one), ties
before majorities. The reviewer's decision is an `Adjudication`, wins over the labels (the candidate's
`label_source` becomes "adjudicated") and is an event ("adjudicate") in the append-only history.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, literal, select, text, tuple_
from sqlmodel import Session

from annotator.database.models import OPEN_DISPUTE, Adjudication, Annotation, AnnotationEvent, Annotator, Candidate
from annotator.database.queries import of_source_and_type
from annotator.labelling.labels import LabelConflict, LabelRow, record_labels

__all__ = [
    "DecidedMeanwhile", "DisputeQueue", "adjudicate", "adjudications", "decision_history",
    "dispute_labels", "disputes", "is_open_dispute", "label_provenance",
]


# Adjudicate's order: lowest agreement first, ties (no resolved human_check) before majorities, then by id; the
# partial index `ix_candidate_dispute` holds the open disputes in it.
_RESOLVED = Candidate.human_check.is_not(None)
_ORDER = (Candidate.agreement, _RESOLVED, Candidate.id)
_PAGE = 200  # disputes read at a time: a reviewer settles a few hundred in a sitting


def _disputes_query(*, data_source: str | None, rewrite_type: str | None, include_adjudicated: bool) -> Select[Any]:
    """Disputed candidates (labels that are not all the same: `Candidate.agreement` below 1, stored with the
    resolved label by `labels.record_labels`) in Adjudicate's order; the open ones walk the partial index."""
    agreement = Candidate.agreement.label("agreement")
    query = select(Candidate.id, Candidate.data_id, Candidate.data_source, Candidate.rewrite_type,
                   Candidate.human_check, Candidate.label_source, Candidate.label_count.label("labels"), agreement)
    # Literal SQL, the index's own predicate: a bound parameter would keep a generic plan off the partial index.
    query = query.where(text("agreement < 1" if include_adjudicated else OPEN_DISPUTE))
    return of_source_and_type(query.order_by(*_ORDER), data_source=data_source, rewrite_type=rewrite_type)


def disputes(
    session: Session,
    *,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    include_adjudicated: bool = False,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Disputed candidates, lowest agreement first: id, data_id, data_source, rewrite_type, human_check
    (None on a tie), label_source, labels, agreement."""
    query = _disputes_query(data_source=data_source, rewrite_type=rewrite_type,
                            include_adjudicated=include_adjudicated)
    if limit is not None:
        query = query.limit(limit)
    return [row._asdict() for row in session.execute(query)]


def is_open_dispute(session: Session, *, candidate_id: int) -> bool:
    """Whether the candidate's labels disagree and no reviewer has decided it yet (one primary-key read)."""
    query = select(Candidate.id).where(Candidate.id == candidate_id, text(OPEN_DISPUTE))
    return session.execute(query).first() is not None


class DisputeQueue:
    """The disputes left to adjudicate, lowest agreement first, read a page at a time and walked one at a time.

    A page is the next `page` open disputes after the last one read, in the order of the partial index that
    holds them (milliseconds however many there are); each dispute is checked again (`is_open_dispute`) just
    before it is shown, since labels and other reviewers' decisions may have changed since the read. When no
    dispute is left after the last one read, the walk starts again from the lowest, for disputes that came since.
    """

    def __init__(self, *, data_source: str | None = None, rewrite_type: str | None = None, page: int = _PAGE) -> None:
        self._filters = {"data_source": data_source, "rewrite_type": rewrite_type}
        self._page = page
        self._ahead: list[int] = []  # the ids of the page still to walk, the next one last
        self._after: tuple[Any, ...] | None = None  # the order's key of the last dispute read
        self._beyond = 0  # open disputes after the page, counted when the page was read

    def __len__(self) -> int:
        """How many disputes are ahead (some may have been settled elsewhere since the read)."""
        return len(self._ahead) + self._beyond

    def _after_last(self, query: Select[Any]) -> Select[Any]:
        if self._after is None:
            return query
        return query.where(tuple_(*_ORDER) > tuple_(*(literal(value) for value in self._after)))

    def _read(self, session: Session) -> None:
        """The page after the last dispute read (from the lowest when there is none), and how many are beyond."""
        query = _disputes_query(**self._filters, include_adjudicated=False)
        from_lowest = self._after is None
        rows = session.execute(self._after_last(query).with_only_columns(*_ORDER).limit(self._page)).all()
        self._ahead = [row[2] for row in rows][::-1]
        self._after = tuple(rows[-1]) if rows else None
        if not from_lowest:  # as counted on the first page ("Disputes left" is a snapshot, as the list is)
            self._beyond = max(0, self._beyond - len(rows))
        elif len(rows) < self._page:
            self._beyond = 0
        else:  # every open dispute, an index-only count; one after a key would scan the table
            total = session.execute(select(func.count()).select_from(query.order_by(None).subquery())).scalar_one()
            self._beyond = total - len(rows)

    def next(self, session: Session, *, exclude: Collection[int] = ()) -> int | None:
        """The next open dispute not in `exclude` (skipped this session), or None when none is left."""
        starts = 0  # reads from the lowest dispute: a second one in a call has seen every dispute
        while True:
            while self._ahead:
                candidate_id = self._ahead.pop()
                if candidate_id not in exclude and is_open_dispute(session, candidate_id=candidate_id):
                    return candidate_id
            if self._after is None:
                starts += 1
                if starts > 1:
                    return None
            self._read(session)


def dispute_labels(session: Session, *, candidate_id: int) -> list[dict[str, Any]]:
    """Every annotator's label and comment on one candidate, in the order they were first given."""
    rows = session.execute(
        select(Annotator.name.label("annotator"), Annotator.is_system, Annotation.human_check,
               Annotation.difficulty_eval, Annotation.comment, Annotation.updated_at)
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .where(Annotation.candidate_id == candidate_id)
        .order_by(Annotation.id)
    )
    return [row._asdict() for row in rows]


def decision_history(session: Session, *, candidate_id: int) -> list[dict[str, Any]]:
    """Every reviewer's decision on one candidate, oldest first, from the append-only history (an override replaces
    the stored decision, never its event): reviewer, human_check, difficulty_eval, comment, at, `overrode` (whose
    decision it replaced, None for the first or a reviewer changing their own) and `current` (the one that stands).
    """
    rows = session.execute(
        select(Annotator.name, AnnotationEvent.new, AnnotationEvent.at)
        .join(Annotator, Annotator.id == AnnotationEvent.annotator_id)
        .where(AnnotationEvent.candidate_id == candidate_id, AnnotationEvent.action == "adjudicate")
        .order_by(AnnotationEvent.id)
    ).all()
    history: list[dict[str, Any]] = []
    for name, new, at in rows:
        before = history[-1]["reviewer"] if history else None
        history.append({"reviewer": name, "human_check": (new or {}).get("human_check"),
                        "difficulty_eval": (new or {}).get("difficulty_eval"), "comment": (new or {}).get("comment"),
                        "at": at, "overrode": before if before not in (None, name) else None, "current": False})
    if history:
        history[-1]["current"] = True
    return history


class DecidedMeanwhile(Exception):
    """Another reviewer decided the dispute since this one was shown; deciding again must say `override`."""

    def __init__(self, *, by: str, human_check: int, difficulty_eval: int | None, comment: str | None = None) -> None:
        super().__init__(f"{by} decided this dispute meanwhile (human_check {human_check}, difficulty_eval "
                         f"{difficulty_eval})")
        self.by, self.human_check, self.difficulty_eval = by, human_check, difficulty_eval
        self.comment = comment  # theirs, which an override keeps in the history


def adjudicate(
    session: Session,
    *,
    candidate_id: int,
    reviewer_id: int,
    human_check: int,
    difficulty_eval: int | None,
    comment: str | None = None,
    override: bool = False,
    decision_id: str | None = None,
    pressed_at: datetime | None = None,
) -> None:
    """Decide a candidate's label as a reviewer (or change that decision): a decision row through
    `labels.record_labels`, which appends the event and stores the candidate's resolved label with
    `label_source` "adjudicated". Call inside `write_session()`.

    Another reviewer's decision is replaced only with `override`; else `DecidedMeanwhile` says whose it is (two
    reviewers on one dispute: the second learns of the first instead of silently replacing it). `decision_id` and
    `pressed_at` (a decision sent from the browser, `browser_adjudication`) go on its event."""
    row = LabelRow(candidate_id, reviewer_id, human_check, difficulty_eval, comment, decision=True,
                   decision_id=decision_id, pressed_at=pressed_at)
    try:
        record_labels(session, rows=[row], replace=override)
    except LabelConflict as conflict:
        by = session.execute(select(Annotator.name).where(Annotator.id == conflict.annotator_id)).scalar_one()
        raise DecidedMeanwhile(by=by, human_check=conflict.human_check, difficulty_eval=conflict.difficulty_eval,
                               comment=conflict.comment) from None


def adjudications(session: Session, *, candidate_ids: Collection[int] | None = None) -> dict[int, dict[str, Any]]:
    """Who adjudicated which candidate and when: {candidate id: {"adjudicated_by", "adjudicated_at"}}."""
    query = select(Adjudication.candidate_id, Annotator.name, Adjudication.updated_at).join(
        Annotator, Annotator.id == Adjudication.annotator_id
    )
    if candidate_ids is not None:
        query = query.where(Adjudication.candidate_id.in_(list(candidate_ids)))
    return {
        row.candidate_id: {"adjudicated_by": row.name, "adjudicated_at": row.updated_at.isoformat(timespec="seconds")}
        for row in session.execute(query)
    }


def label_provenance(session: Session, *, where: ColumnElement[bool] | None = None) -> dict[str, Any]:
    """Where each resolved label comes from, for an export's manifest.

    Returns {"counts": {label_source: n}, "candidates": {data_id: {"label_source", and for adjudicated ones
    "adjudicated_by", "adjudicated_at"}}} over the labelled candidates (those `where` holds for, if given: the
    release's vetted ones).
    """
    query = select(Candidate.id, Candidate.data_id, Candidate.label_source).where(Candidate.human_check.is_not(None))
    if where is not None:
        query = query.where(where)
    who = adjudications(session)
    counts: dict[str, int] = {}
    candidates: dict[str, dict[str, Any]] = {}
    for row in session.execute(query.order_by(Candidate.id)):
        counts[row.label_source] = counts.get(row.label_source, 0) + 1
        candidates[row.data_id] = {"label_source": row.label_source, **who.get(row.id, {})}
    return {"counts": dict(sorted(counts.items())), "candidates": candidates}
