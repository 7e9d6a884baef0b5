"""Adjudicate's queues held in the browser: dispute claims (at most two reviewers on one), decisions stored once by
id with the key's time, the override, the audit sample; on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from datetime import datetime, timedelta

from sqlalchemy import Engine, func, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import (
    Adjudication,
    AnnotationEvent,
    AuditItem,
    Candidate,
    DisputeClaim,
    SentDecision,
    utcnow,
)
from annotator.labelling import audit, labels
from annotator.labelling import browser_adjudication as ba
from tests.support.at_once import stored_twice_at_once
from tests.support.candidates import add_candidates, add_user

DISPUTES, AUDIT = ba.DISPUTES, ba.AUDIT


def _disputes(engine: Engine, count: int) -> list[int]:
    """`count` candidates, each a tie (two annotators disagree on human_check), in the queue's order (by id)."""
    ids = add_candidates(engine, count, rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    rows = [labels.LabelRow(cid, ann.id, 1, 0) for cid in ids] + [labels.LabelRow(cid, bea.id, 0, None) for cid in ids]
    with write_session(engine) as session:
        labels.record_labels(session, rows=rows)
    return ids


def _ms(moment: datetime) -> float:
    return moment.timestamp() * 1000


def _sent(candidate_id: int, human_check: int = 1, difficulty_eval: int | None = 0, *, age_ms: float = 0,
          **more: object) -> dict[str, object]:
    return {"id": str(uuid.uuid4()), "item": candidate_id, "human_check": human_check,
            "difficulty_eval": difficulty_eval, "key": _ms(utcnow()) - age_ms, **more}


def _fill(engine: Engine, reviewer_id: int, queue: str = DISPUTES, size: int = 5, **options: object) -> list[int]:
    with write_session(engine) as session:
        return ba.fill(session, reviewer_id=reviewer_id, queue=queue, size=size, **options)  # type: ignore[arg-type]


def _store(engine: Engine, reviewer_id: int, raw: list[dict[str, object]], queue: str = DISPUTES) -> ba.Stored:
    with write_session(engine) as session:
        return ba.store(session, reviewer_id=reviewer_id, queue=queue, sent=ba.parse(raw, queue=queue))


def _holders(engine: Engine) -> Counter[int]:
    with read_session(engine) as session:
        return Counter(session.execute(select(DisputeClaim.candidate_id)
                                       .where(DisputeClaim.expires_at > utcnow())).scalars())


def test_at_most_two_reviewers_hold_one_dispute(engine: Engine) -> None:
    ids = _disputes(engine, 6)
    rev, rex, roy = (add_user(engine, name, role="reviewer") for name in ("rev", "rex", "roy"))
    assert _fill(engine, rev.id, size=4) == ids[:4]
    assert _fill(engine, rev.id, size=4) == ids[:4]  # asked again (a reload): the same ones, none more
    assert _fill(engine, rex.id, size=4) == ids[:4]  # a second reviewer may hold the same disputes
    assert _fill(engine, roy.id, size=4) == ids[4:]  # a third gets the others only
    assert max(_holders(engine).values()) == 2
    # rev decides the first: rev's claim goes, and the decided one is no longer a dispute for anyone to hold.
    assert _store(engine, rev.id, [_sent(ids[0])]).decided == [ids[0]]
    assert _holders(engine)[ids[0]] == 1
    assert _fill(engine, roy.id, size=4) == ids[4:]
    # rex skips the second: a place is free there, and roy takes it.
    assert _store(engine, rex.id, [{**_sent(ids[1]), "skip": True}]).outcomes
    assert _fill(engine, roy.id, size=4) == [*ids[4:], ids[1]]  # those held first, then the one claimed


def test_a_claim_expires_and_then_others_may_take_it(engine: Engine) -> None:
    ids = _disputes(engine, 2)
    rev, rex, roy = (add_user(engine, name, role="reviewer") for name in ("rev", "rex", "roy"))
    _fill(engine, rev.id, size=1)
    _fill(engine, rex.id, size=1)
    with write_session(engine) as session:  # rev's tab closed half an hour ago
        session.execute(update(DisputeClaim).where(DisputeClaim.reviewer_id == rev.id)
                        .values(expires_at=utcnow() - timedelta(seconds=1)))
    assert _fill(engine, roy.id, size=1) == [ids[0]]
    # rev's decision on it now: two others hold it and rev's hold is gone.
    sent = _sent(ids[0])
    assert _store(engine, rev.id, [sent]).outcomes == {sent["id"]: ba.CLAIM_LOST}
    with read_session(engine) as session:
        assert session.get(Adjudication, ids[0]) is None


def test_a_decision_sent_many_times_is_stored_once_with_its_keys_time(engine: Engine) -> None:
    ids = _disputes(engine, 3)
    rev = add_user(engine, "rev", role="reviewer")
    _fill(engine, rev.id)
    sent = [_sent(ids[0], 0, None, age_ms=60_000, comment="the second condition is implied"),
            {**_sent(ids[1]), "skip": True}]
    first = _store(engine, rev.id, sent)
    assert first.outcomes == {sent[0]["id"]: ba.SAVED, sent[1]["id"]: ba.SKIPPED}
    for _ in range(3):
        again = _store(engine, rev.id, sent)
        assert again.outcomes == first.outcomes and again.decided == []
    with read_session(engine) as session:
        events = session.execute(select(AnnotationEvent.decision_id, AnnotationEvent.at)
                                 .where(AnnotationEvent.action == "adjudicate")).all()
        pages = session.execute(select(SentDecision.page, func.count()).group_by(SentDecision.page)).all()
        candidate = session.get(Candidate, ids[0])
        claims = session.execute(select(DisputeClaim.candidate_id)).scalars().all()
    assert [row.decision_id for row in events] == [sent[0]["id"]]
    assert utcnow() - timedelta(seconds=70) < events[0].at < utcnow() - timedelta(seconds=55)
    assert dict(pages) == {DISPUTES: 2}
    assert (candidate.human_check, candidate.label_source) == (0, "adjudicated")
    assert sorted(claims) == [ids[2]]  # decided and skipped: released


def test_another_reviewers_decision_meanwhile_is_refused_then_overridden(engine: Engine) -> None:
    ids = _disputes(engine, 1)
    rev, rex = add_user(engine, "rev", role="reviewer"), add_user(engine, "rex", role="reviewer")
    _fill(engine, rev.id)
    _fill(engine, rex.id)
    _store(engine, rev.id, [_sent(ids[0], 0, None, comment="implied")])
    mine = _sent(ids[0], 1, 1)
    refused = _store(engine, rex.id, [mine])
    assert refused.meanwhile == [ids[0]] and refused.decided == []
    assert refused.outcomes[mine["id"]].startswith(f"not saved: rev{ba.MEANWHILE}not acceptable.")
    override = {**_sent(ids[0], 1, 1), "override": True}
    assert _store(engine, rex.id, [override]).decided == [ids[0]]
    with read_session(engine) as session:
        decided = session.get(Adjudication, ids[0])
        events = session.execute(select(AnnotationEvent.annotator_id, AnnotationEvent.decision_id)
                                 .where(AnnotationEvent.action == "adjudicate").order_by(AnnotationEvent.id)).all()
    assert (decided.annotator_id, decided.human_check, decided.difficulty_eval) == (rex.id, 1, 1)
    assert [tuple(row) for row in events][1] == (rex.id, override["id"])
    assert len(events) == 2  # the refused one stored nothing but its answer


def test_junk_is_refused_and_an_audit_takes_only_its_two_keys() -> None:
    assert ba.parse("nope", queue=DISPUTES) == []
    assert ba.parse([{"id": "x" * 12, "item": True}], queue=DISPUTES) == ["x" * 12]
    two = {"id": "y" * 12, "item": 3, "human_check": 1, "difficulty_eval": 1}
    assert ba.parse([two], queue=AUDIT) == ["y" * 12]
    assert isinstance(ba.parse([two], queue=DISPUTES)[0], ba.Sent)
    one = ba.parse([{**two, "difficulty_eval": 0, "override": "yes"}], queue=AUDIT)[0]
    assert isinstance(one, ba.Sent) and (one.human_check, one.difficulty_eval, one.override) == (1, None, False)


def test_the_audit_sample_is_claimed_decided_once_and_another_audit_meanwhile_is_refused(engine: Engine) -> None:
    ids = add_candidates(engine, 6, rewrite_types=("remove",))
    ann = add_user(engine, "ann")
    rev, rex, roy = (add_user(engine, name, role="reviewer") for name in ("rev", "rex", "roy"))
    with write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cid, ann.id, 1, 0) for cid in ids])
        audit.draw(session, size=3, seed=5, drawn_by=rev.id)
    with read_session(engine) as session:
        order = list(session.execute(select(AuditItem.candidate_id).order_by(AuditItem.position)).scalars())
    assert _fill(engine, rev.id, AUDIT) == order
    assert _fill(engine, rex.id, AUDIT) == order
    assert _fill(engine, roy.id, AUDIT) == []  # two reviewers hold each
    sent = _sent(order[0], 0, None, age_ms=30_000, comment="solvable after all")
    assert _store(engine, rev.id, [sent, sent], AUDIT).outcomes == {sent["id"]: ba.SAVED}
    theirs = _sent(order[0], 1, 0)
    outcome = _store(engine, rex.id, [theirs], AUDIT).outcomes[theirs["id"]]
    assert outcome == "not saved: rev audited it meanwhile: not unsolvable. S skips it."
    with read_session(engine) as session:
        item = session.execute(select(AuditItem).where(AuditItem.candidate_id == order[0])).scalar_one()
    assert (item.unsolvable, item.audited_by, item.comment) == (0, rev.id, "solvable after all")
    assert utcnow() - timedelta(seconds=40) < item.audited_at < utcnow() - timedelta(seconds=25)
    assert _fill(engine, roy.id, AUDIT) == []  # the decided one is nobody's to hold
    with write_session(engine) as session:
        assert ba.left(session, queue=AUDIT) == 2
        ba.release(session, reviewer_id=rev.id)  # sign-out
    assert _fill(engine, roy.id, AUDIT) == order[1:]


def test_reviewers_filling_at_once_never_put_three_on_one_dispute(engine: Engine) -> None:
    ids = _disputes(engine, 8)
    reviewers = [add_user(engine, f"rev{n}", role="reviewer").id for n in range(5)]
    start = threading.Barrier(len(reviewers))
    failures: list[BaseException] = []

    def fill(reviewer_id: int) -> None:
        try:
            start.wait()
            for _ in range(3):
                _fill(engine, reviewer_id, size=4)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            failures.append(exc)

    threads = [threading.Thread(target=fill, args=(reviewer,)) for reviewer in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    holders = _holders(engine)
    assert max(holders.values()) <= 2 and set(holders) <= set(ids)
    # A reviewer passes over disputes another is claiming at that instant (SKIP LOCKED); asked again, one by one,
    # they take the places left: 5 reviewers x 4 wanted = 20 > 16 places, every one taken, none by a third.
    for reviewer in reviewers:
        _fill(engine, reviewer, size=4)
    holders = _holders(engine)
    assert max(holders.values()) <= 2 and sum(holders.values()) == len(ids) * 2


def test_back_past_the_browser_finds_the_reviewers_earlier_decisions_in_turn(engine: Engine) -> None:
    ids = _disputes(engine, 4)
    rev, rex = add_user(engine, "rev", role="reviewer"), add_user(engine, "rex", role="reviewer")
    _fill(engine, rev.id)
    _fill(engine, rex.id)
    _store(engine, rev.id, [_sent(ids[0]), _sent(ids[2])])
    _store(engine, rex.id, [_sent(ids[3])])  # another reviewer's: not rev's to go back to
    with read_session(engine) as session:
        walk = [ba.previous_decided(session, reviewer_id=rev.id, before=before) for before in (ids[3], ids[2], ids[0])]
    assert walk == [ids[2], ids[0], None]


def test_one_decision_arriving_twice_at_once_is_stored_once(engine: Engine) -> None:
    """Two transactions store the same dispute's decision at the same time: the second waits for the first's id,
    stores nothing, and the next sending gets the first's outcome."""
    ids = _disputes(engine, 1)
    rev = add_user(engine, "rev", role="reviewer")
    _fill(engine, rev.id)
    sent = [_sent(ids[0], comment="once")]
    first, second = stored_twice_at_once(engine, lambda session: ba.store(
        session, reviewer_id=rev.id, queue=DISPUTES, sent=ba.parse(sent, queue=DISPUTES)).outcomes)
    assert first == {sent[0]["id"]: ba.SAVED}
    assert second.get(sent[0]["id"], ba.SAVED) == ba.SAVED
    assert _store(engine, rev.id, sent).outcomes == {sent[0]["id"]: ba.SAVED}
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(AnnotationEvent)
                               .where(AnnotationEvent.action == "adjudicate")).scalar_one() == 1


def test_the_count_left_is_read_every_so_often_and_takes_off_the_reviewers_decisions_between(engine: Engine) -> None:
    ids = _disputes(engine, 4)
    rev, boss = add_user(engine, "rev", role="reviewer"), add_user(engine, "boss", role="admin")
    counted, start = ba.Left(), 1000.0

    def after(decided: int, held: int, seconds: float) -> int:
        with read_session(engine) as session:
            return counted.after(session, queue=DISPUTES, decided=decided, held=held, now=start + seconds)

    assert after(0, 3, 0) == 4  # the first: counted
    _store(engine, rev.id, [_sent(ids[0])])
    _store(engine, boss.id, [_sent(ids[1])])
    # rev's decision taken off at once; boss's seen at the next count, not before.
    assert (after(1, 2, 1), after(0, 2, 2), after(0, 2, ba.LEFT_RECOUNT_SECONDS + 1.5)) == (3, 3, 2)
    _store(engine, boss.id, [_sent(ids[2])])
    counted.recount()  # the queue chosen again
    assert after(0, 1, 13) == 1
    counted.count = 0  # holding more than the count says: counted again at once
    assert after(0, 1, 14) == 1
