"""Cheap fingerprints of the data that slow figures are computed from (`annotator.figures.snapshots` recomputes them
when one changes): a few aggregate reads over indexes, milliseconds where the figures take seconds.

Label and review changes always append an event (`annotationevent`, `transcriptevent`), so the newest event's id
moves with every one of them; gold items and transcripts are counted. What no fingerprint sees (re-judging
stored transcripts) the snapshot's time to live catches. The same data gives the same fingerprint (a gold item
marked and unmarked again leaves the figures as they were).
"""

from __future__ import annotations

from dataclasses import astuple
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from annotator.database.models import (
    AnnotationEvent,
    AuditItem,
    AuditSample,
    Candidate,
    GoldLabel,
    Problem,
    Transcript,
    TranscriptEvent,
)
from annotator.labelling import adaptive
from annotator.labelling.queue import imported_labels_count, labels_per_candidate


def labels_version(session: Session) -> tuple[Any, ...]:
    """Changes when a label is added, changed, deleted or adjudicated, or a gold item is marked or changed."""
    return (
        session.execute(select(func.max(AnnotationEvent.id))).scalar(),
        # Which gold items (their ids' sum) and their labels: a gold item swapped for another moves it too.
        *session.execute(select(func.count(), func.sum(GoldLabel.candidate_id), func.sum(GoldLabel.human_check),
                                func.sum(func.coalesce(GoldLabel.difficulty_eval, 2)))).one(),
    )


def overview_version(session: Session) -> tuple[Any, ...]:
    """Changes when a label is added, changed, deleted or adjudicated, problems or candidates are added, the
    labels per candidate or whether imported labels count change (what "complete" means), an audit sample is drawn
    or an audit decided. A candidate's status changed in place (an LLM verification) or a deletion by hand waits for
    the snapshot's time to live."""
    return (
        session.execute(select(func.max(AnnotationEvent.id))).scalar(),
        session.execute(select(func.max(Candidate.id))).scalar(),
        session.execute(select(func.max(Problem.id))).scalar(),
        labels_per_candidate(session),
        imported_labels_count(session),
        session.execute(select(func.max(AuditSample.id))).scalar(),
        # Decided items and the latest decision: a decision changed moves its time.
        *session.execute(select(func.count(AuditItem.audited_at), func.max(AuditItem.audited_at))).one(),
        # Adaptive overlap and the model behind it: what settles a candidate (a refit settles them again).
        *astuple(adaptive.overlap(session)),
        adaptive.stored_model(session).events,
    )


def transcripts_version(session: Session) -> tuple[Any, ...]:
    """Changes when transcripts are added, a review is given or cleared, or a label changes (the report breaks
    Prec(U) down by the resolved difficulty). No count of the transcripts: on a big database it is a read of a whole
    index on every look, and the app never deletes one (a deletion by hand, like re-judging, waits for the
    snapshot's time to live)."""
    return (
        session.execute(select(func.max(Transcript.id))).scalar(),
        session.execute(select(func.max(TranscriptEvent.id))).scalar(),
        session.execute(select(func.max(AnnotationEvent.id))).scalar(),
    )
