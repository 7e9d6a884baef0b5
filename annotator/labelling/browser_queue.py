"""Annotate's queue held in the browser: the candidates claimed ahead, and the decisions sent back, stored once.

The page keeps the candidate on screen and the next `AHEAD` ready in the browser, each claimed for this annotator
(`queue.claim_next` with `keep_held`), so a key shows the next one at once and its decision travels in the
background. A decision carries an id made in the browser; it may arrive more than once (sent again when no answer
came, or after a reload), and `store` keeps each id once in `sentdecision` with its outcome, so a second arrival
is answered with the first one's outcome and stores nothing. The label's event names the decision and keeps the
key's time: the browser's clock at the key, moved by the offset from the server's clock that the browser measures on
each answer (so a browser's wrong clock does not matter, nor a message held up on the way); `pressed_at` bounds it
to the last `MAX_AGE` before the arrival, else takes the arrival's time.

A label is refused (`CLAIM_LOST`) only when the candidate went to others meanwhile: this annotator's claim
expired and others' labels and claims fill its `labels_per_candidate`. Call `store` and `fill` inside a write
transaction (`write_session()`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import delete, exists, func, select, true, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session

from annotator.database.models import Annotation, Candidate, CandidateClaim, SentDecision, utcnow
from annotator.database.queries import counted_labels, of_source_and_type
from annotator.labelling import adaptive, queue
from annotator.labelling.labels import LabelError, validate

PAGE = "annotate"
# Candidates ready in the browser after the one on screen: a burst of keys (a held key, an expert's run) is over
# before more come from a distant server, and a key never labels what was not on screen.
AHEAD = 20
# What a page's first look claims, and at most how many more each later look claims, so that no transaction holds
# the write lock long (a team signs in at once); the browser asks again until it holds `AHEAD` + 1.
FIRST = 2
STEP = 5
MAX_AGE = timedelta(days=1)  # an older key's time is not believed: the event takes the arrival's
MAX_COMMENT = 10_000
MAX_SENT = 500  # decisions in one message; the browser sends fewer (it keeps a few dozen waiting at most)
SAVED, SKIPPED = "saved", "skipped"
T = TypeVar("T")  # a page's parsed decision (`parse_each`)
CLAIM_LOST = "not saved: your hold on it expired and other annotators have it now"
NOT_A_DECISION = "not saved: not a decision this page knows"


@dataclass(frozen=True)
class Sent:
    """One decision as the browser sent it: a label (`human_check`, `difficulty_eval`) or a skip."""

    id: str
    candidate_id: int
    skip: bool = False
    human_check: int | None = None
    difficulty_eval: int | None = None
    comment: str | None = None
    seconds_spent: float | None = None
    key_ms: float | None = None  # the key's time, ms since the epoch, on the server's clock as the browser knows it


def _number(value: Any, *, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        return None
    return float(value)


# What every page's decision carries, read alike (`parse_each`'s `decision` functions use them).
def item_of(entry: Mapping[str, Any]) -> int | None:
    """The decision's item (a candidate's or a transcript's id), None unless a plausible id."""
    item = entry.get("item")
    return item if isinstance(item, int) and not isinstance(item, bool) and 1 <= item < 2**31 else None


def key_ms_of(entry: Mapping[str, Any]) -> float | None:
    """The key's time as the browser sent it (ms since the epoch), None unless a plausible one."""
    return _number(entry.get("key"), low=0, high=1e14)


def comment_of(entry: Mapping[str, Any]) -> str | None:
    """The decision's comment, trimmed and at most `MAX_COMMENT` characters; None when empty or not text."""
    comment = entry.get("comment")
    return comment.strip()[:MAX_COMMENT] or None if isinstance(comment, str) else None


def parse(raw: Any) -> list[Sent | str]:
    """The browser's list of decisions (JSON values) as `Sent`s; an entry with an id but nothing valid is its id
    alone (refused with `NOT_A_DECISION`), one without an id is dropped (there is nobody to answer)."""
    return parse_each(raw, _decision)


def parse_each(raw: Any, decision: Callable[[Mapping[str, Any]], T | None]) -> list[T | str]:
    """The browser's list (JSON values) read entry by entry with `decision`: an entry with an id but nothing
    `decision` takes is its id alone, one without an id is dropped (there is nobody to answer)."""
    parsed: list[T | str] = []
    for entry in raw[:MAX_SENT] if isinstance(raw, list) else ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str) or not 8 <= len(entry["id"]) <= 36:
            continue
        made = decision(entry)
        parsed.append(entry["id"] if made is None else made)
    return parsed


def _decision(entry: Mapping[str, Any]) -> Sent | None:
    candidate_id = item_of(entry)
    if candidate_id is None:
        return None
    spent = _number(entry.get("spent"), low=0, high=1e7)
    common = {"id": entry["id"], "candidate_id": candidate_id, "key_ms": key_ms_of(entry),
              "seconds_spent": None if spent is None else round(spent / 1000, 3)}
    if entry.get("skip") is True:
        return Sent(skip=True, **common)
    human_check, difficulty_eval = entry.get("human_check"), entry.get("difficulty_eval")
    try:
        validate(human_check, difficulty_eval)  # type: ignore[arg-type]
    except (LabelError, TypeError, ValueError):
        return None
    return Sent(human_check=human_check, difficulty_eval=difficulty_eval, comment=comment_of(entry), **common)


def pressed_at(key_ms: float | None, *, now: datetime) -> datetime:
    """The key's time (`now` when there is none, or it is in the future or older than `MAX_AGE`)."""
    if key_ms is None:
        return now
    key = datetime.fromtimestamp(key_ms / 1000, tz=UTC)
    return key if now - MAX_AGE <= key <= now else now


@dataclass
class Stored:
    """What `store` did: the outcome of every decision sent (stored now or before) by id, and the candidates
    labelled now, each with whether it is this annotator's first label on it."""

    outcomes: dict[str, str] = field(default_factory=dict)
    labelled: list[tuple[int, bool]] = field(default_factory=list)


def store(session: Session, *, annotator_id: int, sent: Sequence[Sent | str], now: datetime | None = None) -> Stored:
    """Store each decision not stored before, in order (see the module's docstring)."""
    result = Stored()

    def apply(decision: Sent, at: datetime) -> str:
        return _apply(session, annotator_id=annotator_id, decision=decision, at=at, result=result)

    result.outcomes = store_each_once(session, person_id=annotator_id, page=PAGE, sent=sent,
                                      item_of=lambda decision: decision.candidate_id, apply=apply,
                                      junk=NOT_A_DECISION, now=now or utcnow())
    return result


def store_each_once(session: Session, *, person_id: int, page: str, sent: Sequence[Any],
                    item_of: Callable[[Any], int], apply: Callable[[Any, datetime], str], junk: str,
                    now: datetime) -> dict[str, str]:
    """Store each decision of `sent` (a page's parsed decisions: each with its `id` and `key_ms`, or the id of
    something that was not one, answered `junk`) not stored before, in order: its id in `SentDecision` first, then
    `apply(decision, key_time)`, whose outcome is kept with the id. The outcome of every decision sent, stored now
    or before, by id; another account's id (it cannot happen by chance) is neither stored again nor answered."""
    ids = [entry if isinstance(entry, str) else entry.id for entry in sent]
    if not ids:
        return {}
    known = session.execute(select(SentDecision.id, SentDecision.annotator_id, SentDecision.outcome)
                            .where(SentDecision.id.in_(ids))).all()
    outcomes = {row.id: row.outcome for row in known if row.annotator_id == person_id}
    taken = {row.id for row in known}
    for entry in sent:
        decision_id = entry if isinstance(entry, str) else entry.id
        if decision_id in taken:
            continue
        taken.add(decision_id)
        key_time = now if isinstance(entry, str) else pressed_at(entry.key_ms, now=now)
        # The id first: should another transaction be storing the same decision (the browser's two sessions after a
        # lost connection), this waits for it and then stores nothing; the next sending gets its outcome.
        if not _receive(session, id=decision_id, annotator_id=person_id, page=page,
                        item_id=0 if isinstance(entry, str) else item_of(entry), pressed_at=key_time,
                        received_at=now, outcome=""):
            continue
        outcome = (junk if isinstance(entry, str) else apply(entry, key_time))[:300]
        session.execute(update(SentDecision).where(SentDecision.id == decision_id).values(outcome=outcome))
        outcomes[decision_id] = outcome
    return outcomes


def _receive(session: Session, **row: Any) -> bool:
    """Insert the decision's row unless its id is there (INSERT ... ON CONFLICT DO NOTHING); whether it was new."""
    dialect = session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(SentDecision).values(**row).on_conflict_do_nothing(index_elements=["id"])
    return session.connection().execute(statement.returning(SentDecision.id)).first() is not None


def _apply(session: Session, *, annotator_id: int, decision: Sent, at: datetime, result: Stored) -> str:
    if decision.skip:
        queue.release(session, annotator_id=annotator_id, candidate_id=decision.candidate_id)
        return SKIPPED
    first = not session.execute(select(exists().where(Annotation.candidate_id == decision.candidate_id,
                                                      Annotation.annotator_id == annotator_id))).scalar()
    if first and session.get(Candidate, decision.candidate_id) is None:
        return NOT_A_DECISION
    if first and not _may_label(session, annotator_id=annotator_id, candidate_id=decision.candidate_id):
        return CLAIM_LOST
    queue.decide(session, annotator_id=annotator_id, candidate_id=decision.candidate_id,
                 human_check=decision.human_check, difficulty_eval=decision.difficulty_eval,  # type: ignore[arg-type]
                 comment=decision.comment, seconds_spent=decision.seconds_spent, decision_id=decision.id,
                 pressed_at=at)
    result.labelled.append((decision.candidate_id, first))
    return SAVED


def _may_label(session: Session, *, annotator_id: int, candidate_id: int) -> bool:
    """Held by this annotator, or with room left for their label beside the others' labels and claims."""
    now = utcnow()
    if session.execute(select(exists().where(CandidateClaim.candidate_id == candidate_id,
                                             CandidateClaim.annotator_id == annotator_id,
                                             CandidateClaim.expires_at > now))).scalar():
        return True
    others = select(func.count()).where(CandidateClaim.candidate_id == candidate_id,
                                        CandidateClaim.annotator_id != annotator_id,
                                        CandidateClaim.expires_at > now).scalar_subquery()
    target = queue.label_target(session)
    # With adaptive overlap a candidate goes to one person at a time (`queue.next_candidate_query`).
    room = select(Candidate.id).where(Candidate.id == candidate_id, ~Candidate.settled,
                                      counted_labels(target) + others < target.labels,
                                      others == 0 if adaptive.adaptive_on(session) else true())
    return session.execute(room).first() is not None


def held(session: Session, *, annotator_id: int, data_source: str | None = None, rewrite_type: str | None = None,
         now: datetime | None = None) -> list[int]:
    """The candidates this annotator holds in the browser and has not labelled, in the order they were claimed."""
    query = (
        select(Candidate.id)
        .join(CandidateClaim, CandidateClaim.candidate_id == Candidate.id)
        .where(CandidateClaim.annotator_id == annotator_id, CandidateClaim.expires_at > (now or utcnow()),
               CandidateClaim.batch.is_(None))
        .where(~exists().where(Annotation.candidate_id == Candidate.id, Annotation.annotator_id == annotator_id))
        .order_by(CandidateClaim.expires_at, Candidate.id)
    )
    return list(session.execute(of_source_and_type(query, data_source=data_source,
                                                   rewrite_type=rewrite_type)).scalars())


def fill(session: Session, *, annotator_id: int, exclude: Collection[int] = (), size: int = AHEAD + 1,
         data_source: str | None = None, rewrite_type: str | None = None) -> list[int]:
    """The candidates to have in the browser: those held (but `exclude`d ones: decided or skipped there), then
    the next ones claimed, up to `size`."""
    filters = {"data_source": data_source, "rewrite_type": rewrite_type}
    ids = [i for i in held(session, annotator_id=annotator_id, **filters) if i not in exclude][:size]
    while len(ids) < size:
        following = queue.claim_next(session, annotator_id=annotator_id, exclude=[*exclude, *ids], keep_held=True,
                                     **filters)
        if following is None:
            break
        ids.append(following)
        if session.get_bind().dialect.name == "sqlite" and len(ids) < size:
            ids += _claim_together(session, annotator_id=annotator_id, exclude=[*exclude, *ids],
                                   count=size - len(ids), filters=filters)
    return ids


def _claim_together(session: Session, *, annotator_id: int, exclude: Collection[int], count: int,
                    filters: dict[str, Any]) -> list[int]:
    """SQLite (its write lock held: nobody else claims meanwhile): the next `count` ordinary candidates in one
    query and their claims in one statement, so that a page's transaction is short. (Gold items come one per
    `claim_next`; PostgreSQL locks and checks each candidate there.)"""
    query = queue.next_candidate_query(session, annotator_id=annotator_id, exclude=exclude, **filters).limit(count)
    found = list(session.execute(query).scalars())
    expires = utcnow() + timedelta(minutes=queue.CLAIM_MINUTES)
    if found:
        session.execute(delete(CandidateClaim).where(CandidateClaim.candidate_id.in_(found),
                                                     CandidateClaim.annotator_id == annotator_id))
        session.execute(sqlite_insert(CandidateClaim), [
            {"candidate_id": candidate_id, "annotator_id": annotator_id, "expires_at": expires, "batch": None}
            for candidate_id in found])
    return found
