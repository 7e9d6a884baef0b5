"""Adjudicate's queues held in the browser: the disputes and the audit sample claimed ahead, and the reviewers'
decisions sent back, stored once.

As on Annotate (`browser_queue`), the page keeps the candidate on screen and the next ones ready in the reviewer's
browser, and each decision travels in the background with an id made there, kept once in `sentdecision` (page
"adjudicate" for a dispute, "audit" for the audit sample) with its outcome; a second arrival is answered with the
first one's outcome and stores nothing. The event of a dispute's decision names the decision and keeps the key's
time (`browser_queue.pressed_at`); an audit decision's time is the key's.

The candidates held ahead are claimed (`DisputeClaim`, per queue) until `CLAIM_MINUTES` pass, the reviewer decides
or skips them, or signs out; at most `REVIEWERS` reviewers hold one candidate of a queue at once, so that prefetching
never shows one dispute to more. A decision is refused when:

- the reviewer's claim expired and `REVIEWERS` others hold the candidate now (`CLAIM_LOST`);
- another reviewer decided the dispute meanwhile: the outcome says who and how (`meanwhile`), and the same key
  pressed again, sent with `override`, replaces their decision (theirs stays in the history);
- another reviewer audited the candidate meanwhile (an audit is not overridden from the page).

Call `store` and `fill` inside a write transaction (`write_session()`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, exists, func, insert, select, text
from sqlmodel import Session

from annotator.database.models import (
    OPEN_DISPUTE,
    AnnotationEvent,
    AuditItem,
    Candidate,
    DisputeClaim,
    utcnow,
)
from annotator.database.vocabulary import label_name
from annotator.labelling import adjudication, audit
from annotator.labelling.browser_queue import (
    NOT_A_DECISION,
    SAVED,
    SKIPPED,
    comment_of,
    item_of,
    key_ms_of,
    parse_each,
    store_each_once,
)
from annotator.labelling.labels import LabelError, validate
from annotator.labelling.queue import CLAIM_MINUTES  # as long as a candidate's claim on Annotate

DISPUTES, AUDIT = "adjudicate", "audit"  # the queues: `SentDecision.page` and `DisputeClaim.queue`
QUEUES = (DISPUTES, AUDIT)
REVIEWERS = 2  # at most this many reviewers hold one candidate of a queue at once
# Others' decisions show in a reviewer's count of what is left within this many seconds (`Left`); theirs at once.
LEFT_RECOUNT_SECONDS = 10.0
CLAIM_LOST = f"not saved: your hold on it expired and {REVIEWERS} other reviewers have it now"
MEANWHILE = " decided this dispute meanwhile: "  # in a refusal the same key pressed again overrides
_ORDER = (Candidate.agreement, Candidate.human_check.is_not(None), Candidate.id)  # `adjudication`'s order


@dataclass(frozen=True)
class Sent:
    """One decision as the browser sent it: a dispute's label (`human_check`, `difficulty_eval`), an audit's
    `human_check` (1 truly unsolvable, 0 not), or a skip."""

    id: str
    candidate_id: int
    skip: bool = False
    human_check: int | None = None
    difficulty_eval: int | None = None
    comment: str | None = None
    override: bool = False
    key_ms: float | None = None


def parse(raw: Any, *, queue: str) -> list[Sent | str]:
    """The browser's list of decisions (JSON values) as `Sent`s; an entry with an id but nothing valid for `queue`
    is its id alone (refused with `NOT_A_DECISION`), one without an id is dropped."""
    return parse_each(raw, lambda entry: _decision(entry, queue=queue))


def _decision(entry: Mapping[str, Any], *, queue: str) -> Sent | None:
    candidate_id, key_ms = item_of(entry), key_ms_of(entry)
    if candidate_id is None:
        return None
    if entry.get("skip") is True:
        return Sent(id=entry["id"], candidate_id=candidate_id, skip=True, key_ms=key_ms)
    human_check, difficulty_eval = entry.get("human_check"), entry.get("difficulty_eval")
    if queue == AUDIT:
        if type(human_check) is not int or human_check not in audit.DECISIONS or human_check and difficulty_eval:
            return None
        difficulty_eval = None
    else:
        try:
            validate(human_check, difficulty_eval)  # type: ignore[arg-type]
        except (LabelError, TypeError, ValueError):
            return None
    return Sent(id=entry["id"], candidate_id=candidate_id, human_check=human_check, difficulty_eval=difficulty_eval,
                comment=comment_of(entry), override=entry.get("override") is True, key_ms=key_ms)


@dataclass
class Stored:
    """What `store` did: the outcome of every decision sent (stored now or before) by id, the candidates decided
    now, and those whose decision met another reviewer's made meanwhile (shown again with it)."""

    outcomes: dict[str, str] = field(default_factory=dict)
    decided: list[int] = field(default_factory=list)
    meanwhile: list[int] = field(default_factory=list)


def store(session: Session, *, reviewer_id: int, queue: str, sent: Sequence[Sent | str],
          now: datetime | None = None) -> Stored:
    """Store each decision not stored before, in order (see the module's docstring)."""
    result = Stored()

    def apply(decision: Sent, at: datetime) -> str:
        return _apply(session, reviewer_id=reviewer_id, queue=queue, decision=decision, at=at, result=result)

    result.outcomes = store_each_once(session, person_id=reviewer_id, page=queue, sent=sent,
                                      item_of=lambda decision: decision.candidate_id, apply=apply,
                                      junk=NOT_A_DECISION, now=now or utcnow())
    return result


def _apply(session: Session, *, reviewer_id: int, queue: str, decision: Sent, at: datetime, result: Stored) -> str:
    if decision.skip:
        release(session, reviewer_id=reviewer_id, queue=queue, candidate_id=decision.candidate_id)
        return SKIPPED
    candidate = session.get(Candidate, decision.candidate_id)
    if candidate is None:
        return NOT_A_DECISION
    if not _may_decide(session, reviewer_id=reviewer_id, queue=queue, candidate_id=decision.candidate_id):
        return CLAIM_LOST
    try:
        if queue == AUDIT:
            audit.decide(session, candidate_id=decision.candidate_id, reviewer_id=reviewer_id,
                         unsolvable=decision.human_check, comment=decision.comment, at=at)  # type: ignore[arg-type]
        else:
            adjudication.adjudicate(session, candidate_id=decision.candidate_id, reviewer_id=reviewer_id,
                                    human_check=decision.human_check,  # type: ignore[arg-type]
                                    difficulty_eval=decision.difficulty_eval, comment=decision.comment,
                                    override=decision.override, decision_id=decision.id, pressed_at=at)
    except adjudication.DecidedMeanwhile as exc:
        result.meanwhile.append(decision.candidate_id)
        theirs = label_name(exc.human_check, exc.difficulty_eval, candidate.rewrite_type)
        return (f"not saved: {exc.by}{MEANWHILE}{theirs}. Their comment is under Decisions. Press the same key "
                "again to override their decision, or S to skip.")
    except audit.AuditedMeanwhile as exc:
        return f"not saved: {exc.by} audited it meanwhile: {audit.DECISIONS[exc.unsolvable]}. S skips it."
    except audit.AuditError as exc:
        return f"not saved: {exc}"
    release(session, reviewer_id=reviewer_id, queue=queue, candidate_id=decision.candidate_id)
    result.decided.append(decision.candidate_id)
    return SAVED


def _unexpired(queue: str, now: datetime) -> Any:
    return (DisputeClaim.queue == queue) & (DisputeClaim.expires_at > now)


def _others(queue: str, reviewer_id: int, candidate: Any, now: datetime) -> Any:
    """How many other reviewers hold `candidate` (a column) in `queue` now."""
    return (select(func.count()).where(DisputeClaim.candidate_id == candidate, DisputeClaim.reviewer_id != reviewer_id,
                                       _unexpired(queue, now)).scalar_subquery())


def _holds(queue: str, reviewer_id: int, candidate: Any, now: datetime) -> Any:
    return exists().where(DisputeClaim.candidate_id == candidate, DisputeClaim.reviewer_id == reviewer_id,
                          _unexpired(queue, now))


def _may_decide(session: Session, *, reviewer_id: int, queue: str, candidate_id: int) -> bool:
    """Held by this reviewer, or held by fewer than `REVIEWERS` others."""
    now = utcnow()
    held = _holds(queue, reviewer_id, candidate_id, now)
    room = _others(queue, reviewer_id, candidate_id, now) < REVIEWERS
    return bool(session.execute(select(held | room)).scalar())


def release(session: Session, *, reviewer_id: int, queue: str | None = None, candidate_id: int | None = None) -> None:
    """Give up this reviewer's claims: one candidate's in one queue, or all of a queue, or all (sign-out)."""
    query = delete(DisputeClaim).where(DisputeClaim.reviewer_id == reviewer_id)
    if queue is not None:
        query = query.where(DisputeClaim.queue == queue)
    if candidate_id is not None:
        query = query.where(DisputeClaim.candidate_id == candidate_id)
    session.execute(query)


def _open(queue: str, session: Session) -> tuple[Any, Any, tuple[Any, ...]]:
    """The queue's candidates still to decide: (a query of their ids, the id column, the order)."""
    if queue == AUDIT:
        sample = audit.current_sample(session)
        query = select(AuditItem.candidate_id).where(AuditItem.sample_id == (sample.id if sample else -1),
                                                     AuditItem.unsolvable.is_(None))
        return query, AuditItem.candidate_id, (AuditItem.position,)
    # Literal SQL, the partial index's own predicate (see `adjudication`).
    return select(Candidate.id).where(text(OPEN_DISPUTE)), Candidate.id, _ORDER


def held(session: Session, *, reviewer_id: int, queue: str, now: datetime | None = None) -> list[int]:
    """The candidates of `queue` this reviewer holds and nobody has decided yet, in the queue's order."""
    # From the reviewer's few claims (an index on the reviewer), not from the queue's many open candidates.
    claimed = list(session.execute(select(DisputeClaim.candidate_id).where(
        DisputeClaim.reviewer_id == reviewer_id, _unexpired(queue, now or utcnow()))).scalars())
    if not claimed:
        return []
    query, column, order = _open(queue, session)
    return list(session.execute(query.where(column.in_(claimed)).order_by(*order)).scalars())


def fill(session: Session, *, reviewer_id: int, queue: str, exclude: Collection[int] = (), size: int) -> list[int]:
    """The candidates to have in the browser: those held (but `exclude`d ones: decided or skipped there), then the
    next ones claimed, each held by fewer than `REVIEWERS` others, up to `size`."""
    now = utcnow()
    ids = [i for i in held(session, reviewer_id=reviewer_id, queue=queue, now=now) if i not in exclude][:size]
    if len(ids) >= size:
        return ids
    query, column, order = _open(queue, session)
    query = query.where(_others(queue, reviewer_id, column, now) < REVIEWERS, column.not_in([*exclude, *ids]),
                        ~_holds(queue, reviewer_id, column, now))
    found = _lock_room(session, query=query.order_by(*order), column=column, count=size - len(ids))
    if found:
        # A claim of this reviewer's that expired would clash with the new one's key.
        session.execute(delete(DisputeClaim).where(DisputeClaim.candidate_id.in_(found), DisputeClaim.queue == queue,
                                                   DisputeClaim.reviewer_id == reviewer_id))
        expires = now + timedelta(minutes=CLAIM_MINUTES)
        session.execute(insert(DisputeClaim), [{"candidate_id": candidate_id, "reviewer_id": reviewer_id,
                                                "queue": queue, "expires_at": expires} for candidate_id in found])
    return [*ids, *found]


def _lock_room(session: Session, *, query: Any, column: Any, count: int) -> list[int]:
    """The first `count` of `query` (candidates with room for this reviewer's claim).

    SQLite: write_session's BEGIN IMMEDIATE already serialises "find and claim". PostgreSQL: their rows locked
    (`SKIP LOCKED`: another reviewer claiming them now) and then read again in a fresh statement, whose snapshot
    sees the claims committed meanwhile (everyone who claims or decides one holds its row lock first)."""
    if session.get_bind().dialect.name != "postgresql":
        return list(session.execute(query.limit(count)).scalars())
    locked = list(session.execute(query.limit(count).with_for_update(of=column.table, skip_locked=True)).scalars())
    if not locked:
        return []
    still = set(session.execute(query.where(column.in_(locked))).scalars())
    return [candidate_id for candidate_id in locked if candidate_id in still]


def left(session: Session, *, queue: str) -> int:
    """How many candidates of `queue` nobody has decided yet (an index-only count for the disputes)."""
    query, _, _ = _open(queue, session)
    return session.execute(select(func.count()).select_from(query.subquery())).scalar_one()


@dataclass
class Left:
    """How many candidates of a queue are left, as one reviewer's page shows it (kept in the page's state): counted
    by the database (`left`: every open dispute, too slow for each key on a big project) at most every
    `LEFT_RECOUNT_SECONDS`, the reviewer's own decisions taken off in between. Others' decisions show at the next
    count; a queue holding more than the count says (a sample drawn meanwhile) is counted again at once."""

    count: int = 0
    counted_at: float = -math.inf

    def after(self, session: Session, *, queue: str, decided: int, held: int, now: float | None = None) -> int:
        """The count after this reviewer's `decided` decisions, with `held` candidates now held for them."""
        now = time.monotonic() if now is None else now
        self.count -= decided
        if now - self.counted_at > LEFT_RECOUNT_SECONDS or self.count < held:
            self.count, self.counted_at = left(session, queue=queue), now
        return self.count

    def recount(self) -> None:
        """Count again at the next `after` (the queue chosen again)."""
        self.counted_at = -math.inf


def previous_decided(session: Session, *, reviewer_id: int, before: int | None) -> int | None:
    """The dispute this reviewer decided last before deciding `before` (the latest when `before` is None or not
    decided by them): B going back past what the browser holds."""
    mine = (AnnotationEvent.annotator_id == reviewer_id) & (AnnotationEvent.action == "adjudicate")
    query = select(AnnotationEvent.candidate_id).where(mine)
    if before is not None:
        last = session.execute(select(func.max(AnnotationEvent.id))
                               .where(mine, AnnotationEvent.candidate_id == before)).scalar_one()
        query = query.where(AnnotationEvent.candidate_id != before)
        if last is not None:
            query = query.where(AnnotationEvent.id < last)
    return session.execute(query.order_by(AnnotationEvent.id.desc()).limit(1)).scalar_one_or_none()
