"""Review's queue held in the browser: the transcripts around the one on screen, and the reviews sent back, stored
once.

The browser holds a window of the reviewer's walk through the review queue (`review.queue.ReviewQueue`, in its
order): the next `AHEAD` after the one on screen, so that a key shows the next at once, and the last `BEHIND`, so
that `B` goes back at once. It says where it is in the walk with each message, and the page hands it the window
from there (`window`). Review has no claims: two reviewers may review the same transcript, as on the page without
the browser's queue; the later review wins and both are in `transcriptevent`.

A review (`S`, `R`, `F`; `Enter` agrees with the judge; or the review cleared) carries an id made in the browser;
it may arrive more than once (sent again when no answer came, or after a reload), and `store` keeps each id once in
`sentdecision` (page "review") with its outcome, so a second arrival is answered with the first one's outcome and
stores nothing. The event keeps the key's time (`labelling.browser_queue.pressed_at`) and the decision's id. A
review the rules refuse (an unknown transcript, a bad tag, Enter on a transcript the judge gave no verdict) is
answered with why; the browser shows it and brings the transcript back. Call `store` inside a write transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Transcript, utcnow
from annotator.database.vocabulary import Verdict
from annotator.labelling.browser_queue import comment_of, item_of, key_ms_of, parse_each, store_each_once
from annotator.transcripts.review.decisions import MAX_TAGS, ReviewError, clear_review, record_review
from annotator.transcripts.review.queue import ReviewQueue

PAGE = "review"
AHEAD = 20  # transcripts ready in the browser after the one on screen
BEHIND = 20  # and before it, for B
SAVED = "saved"
NOT_A_DECISION = "not saved: not a review this page knows"
NO_JUDGE = "not saved: the judge gave no verdict to agree with; press S, R or F"


@dataclass(frozen=True)
class Sent:
    """One review as the browser sent it: a verdict (`S`, `R`, `F`), the judge's (`agree`), or the review
    cleared (`clear`), with the tags and the comment."""

    id: str
    transcript_id: int
    verdict: str | None = None
    agree: bool = False
    clear: bool = False
    tags: tuple[str, ...] = ()
    comment: str | None = None
    key_ms: float | None = None  # the key's time, ms since the epoch, on the server's clock as the browser knows it


def parse(raw: Any) -> list[Sent | str]:
    """The browser's list of reviews (JSON values) as `Sent`s; an entry with an id but nothing valid is its id
    alone (refused with `NOT_A_DECISION`), one without an id is dropped (there is nobody to answer)."""
    return parse_each(raw, _decision)


def _decision(entry: Mapping[str, Any]) -> Sent | None:
    transcript_id = item_of(entry)
    if transcript_id is None:
        return None
    common = {"id": entry["id"], "transcript_id": transcript_id, "key_ms": key_ms_of(entry)}
    if entry.get("clear") is True:
        return Sent(clear=True, **common)
    verdict, agree = entry.get("verdict"), entry.get("agree") is True
    if not agree and verdict not in Verdict.__members__:
        return None
    tags = entry.get("tags", [])
    # The tags' text is checked where a review is recorded (`decisions.record_review`): a bad one is refused there.
    if not isinstance(tags, list) or len(tags) > MAX_TAGS or not all(isinstance(tag, str) for tag in tags):
        return None
    return Sent(verdict=None if agree else verdict, agree=agree, tags=tuple(tags), comment=comment_of(entry), **common)


@dataclass
class Stored:
    """What `store` did: the outcome of every review sent (stored now or before) by id, and the transcripts whose
    review was stored now."""

    outcomes: dict[str, str] = field(default_factory=dict)
    reviewed: list[int] = field(default_factory=list)


def store(session: Session, *, annotator_id: int, sent: Sequence[Sent | str], now: datetime | None = None) -> Stored:
    """Store each review not stored before, in order (see the module's docstring)."""
    result = Stored()

    def apply(review: Sent, at: datetime) -> str:
        outcome = _apply(session, annotator_id=annotator_id, decision=review, at=at)
        if outcome == SAVED:
            result.reviewed.append(review.transcript_id)
        return outcome

    result.outcomes = store_each_once(session, person_id=annotator_id, page=PAGE, sent=sent,
                                      item_of=lambda review: review.transcript_id, apply=apply,
                                      junk=NOT_A_DECISION, now=now or utcnow())
    return result


def _apply(session: Session, *, annotator_id: int, decision: Sent, at: datetime) -> str:
    common = {"transcript_id": decision.transcript_id, "annotator_id": annotator_id, "at": at,
              "decision_id": decision.id}
    try:
        if decision.clear:
            clear_review(session, **common)
            return SAVED
        verdict = decision.verdict
        if decision.agree:
            verdict = session.execute(select(Transcript.judge).where(Transcript.id == decision.transcript_id)
                                      ).scalar_one_or_none()
            if verdict is None:
                return NO_JUDGE if session.get(Transcript, decision.transcript_id) is not None else NOT_A_DECISION
        record_review(session, verdict=str(verdict), tags=decision.tags, comment=decision.comment, **common)
    except ReviewError as exc:  # checked before anything is written
        return f"not saved: {exc}"
    return SAVED


@dataclass(frozen=True)
class Window:
    """The part of the walk the browser holds: its transcripts from place `start` on, and whether the walk ends
    within them (`end`: its length then)."""

    start: int
    ids: list[int]
    end: int | None


def window(session: Session, walk: ReviewQueue, *, position: int, ahead: int = AHEAD,
           behind: int = BEHIND) -> Window:
    """The transcripts around place `position` of the walk (from `behind` before it to `ahead` after it), reading
    the walk on as far as needed."""
    position = max(0, position)
    last = walk.id_at(session, position + ahead)  # reads the queue's next pages when needed
    start = max(0, position - behind)
    ids = walk.ids[start:position + ahead + 1]
    return Window(start=start, ids=ids, end=len(walk.ids) if last is None else None)
