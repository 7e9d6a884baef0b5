from __future__ import annotations

import uuid
from collections import Counter
from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Annotation, AnnotationEvent, CandidateClaim, SentDecision, utcnow
from annotator.labelling import browser_queue, queue
from tests.support.at_once import stored_twice_at_once
from tests.support.candidates import add_candidates, add_user


def _label(candidate_id: int, human_check: int = 1, difficulty_eval: int | None = 0, *, age_ms: float = 0,
           comment: str = "") -> dict[str, object]:
    """A label as the browser sends it, its key pressed `age_ms` ago."""
    return {"id": str(uuid.uuid4()), "item": candidate_id, "human_check": human_check,
            "difficulty_eval": difficulty_eval, "comment": comment, "key": _ms(utcnow()) - age_ms, "spent": 2000}


def _ms(moment: datetime) -> float:
    return moment.timestamp() * 1000


def _store(engine: Engine, annotator_id: int, raw: list[dict[str, object]]) -> browser_queue.Stored:
    with write_session(engine) as session:
        return browser_queue.store(session, annotator_id=annotator_id, sent=browser_queue.parse(raw))


def _fill(engine: Engine, annotator_id: int, **options: object) -> list[int]:
    with write_session(engine) as session:
        return browser_queue.fill(session, annotator_id=annotator_id, **options)  # type: ignore[arg-type]


def test_the_browser_holds_the_next_candidates_each_claimed_and_a_reload_resumes_on_them(engine: Engine) -> None:
    ids = add_candidates(engine, 10)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    assert _fill(engine, ann.id, size=4) == ids[:4]
    assert _fill(engine, ann.id, size=4) == ids[:4]  # asked again (a reload): the same ones, nothing more claimed
    assert _fill(engine, bob.id, size=4) == ids[4:8]  # with one label per candidate, nobody else gets them
    with read_session(engine) as session:
        claims = Counter(session.execute(select(CandidateClaim.annotator_id)).scalars())
    assert claims == {ann.id: 4, bob.id: 4}
    # Two decided in the browser, not yet arrived: the server holds them back and claims two more ahead.
    assert _fill(engine, ann.id, exclude=ids[:2], size=4) == [*ids[2:4], *ids[8:10]]


def test_a_decision_sent_many_times_is_stored_once_with_the_time_of_its_key(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    ann = add_user(engine, "ann")
    _fill(engine, ann.id)
    sent = [_label(ids[0], age_ms=90_000, comment="two conditions changed"), _label(ids[1], 0, None)]
    before = utcnow()
    first = _store(engine, ann.id, sent)
    assert first.outcomes == {sent[0]["id"]: "saved", sent[1]["id"]: "saved"}
    assert first.labelled == [(ids[0], True), (ids[1], True)]
    for _ in range(3):  # its answer lost each time: sent again, older by then
        again = _store(engine, ann.id, [{**entry, "key": float(entry["key"]) - 5000} for entry in sent])
        assert again.outcomes == first.outcomes and again.labelled == []
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Annotation)).scalar_one() == 2
        events = {row.decision_id: row for row in session.execute(
            select(AnnotationEvent.decision_id, AnnotationEvent.at, AnnotationEvent.candidate_id))}
        label = session.execute(select(Annotation.comment, Annotation.seconds_spent)
                                .where(Annotation.candidate_id == ids[0])).one()
        claims = session.execute(select(CandidateClaim.candidate_id)).scalars().all()
    assert set(events) == {sent[0]["id"], sent[1]["id"]}
    # The key was pressed 90 s before the first arrival: the event says so.
    key_time = events[sent[0]["id"]].at
    assert before - timedelta(seconds=91) <= key_time <= utcnow() - timedelta(seconds=89)
    assert tuple(label) == ("two conditions changed", 2.0)  # time spent counted once
    assert sorted(claims) == ids[2:4]  # the decided ones' claims released


def test_one_decision_arriving_twice_at_once_is_stored_once(engine: Engine) -> None:
    """Two transactions store the same decision at the same time (the browser's old and new connection after a
    drop): the second waits for the first's id, stores nothing, and the next sending gets the first's outcome."""
    ids = add_candidates(engine, 2)
    ann = add_user(engine, "ann")
    _fill(engine, ann.id)
    sent = [_label(ids[0])]
    first, second = stored_twice_at_once(engine, lambda session: browser_queue.store(
        session, annotator_id=ann.id, sent=browser_queue.parse(sent)).outcomes)
    assert first == {sent[0]["id"]: "saved"}
    assert second.get(sent[0]["id"], "saved") == "saved"
    assert _store(engine, ann.id, sent).outcomes == {sent[0]["id"]: "saved"}
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Annotation)).scalar_one() == 1
        assert session.execute(select(func.count()).select_from(AnnotationEvent)).scalar_one() == 1


def test_an_unbelievable_key_time_is_the_arrivals(engine: Engine) -> None:
    now = utcnow()
    assert browser_queue.pressed_at(_ms(now) + 5000, now=now) == now  # a key in the future
    assert browser_queue.pressed_at(_ms(now) - 3 * 86_400_000, now=now) == now  # older than MAX_AGE
    assert browser_queue.pressed_at(None, now=now) == now
    assert abs(browser_queue.pressed_at(_ms(now) - 2500, now=now) - (now - timedelta(seconds=2.5))) < timedelta(
        milliseconds=1)


def test_a_skip_releases_its_candidate_and_a_label_whose_hold_went_to_others_is_refused(engine: Engine) -> None:
    ids = add_candidates(engine, 3)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    held = _fill(engine, ann.id, size=2)
    skip = {"id": str(uuid.uuid4()), "item": held[0], "skip": True, "key": _ms(utcnow())}
    late = _label(held[1])
    assert _store(engine, ann.id, [skip]).outcomes == {skip["id"]: "skipped"}
    with write_session(engine) as session:  # ann's hold on the second expires; bob takes it and labels it
        session.execute(update(CandidateClaim).where(CandidateClaim.annotator_id == ann.id)
                        .values(expires_at=utcnow() - timedelta(minutes=1)))
        assert queue.claim_next(session, annotator_id=bob.id, exclude=[held[0]]) == held[1]
    assert _store(engine, ann.id, [late]).outcomes == {late["id"]: browser_queue.CLAIM_LOST}
    with read_session(engine) as session:
        assert session.execute(select(Annotation.candidate_id)).scalars().all() == []
        refused = session.get(SentDecision, late["id"])
    assert refused is not None and refused.outcome == browser_queue.CLAIM_LOST and refused.item_id == held[1]
    # Sent again, it stays refused; an expired hold nobody took is still labelled.
    assert _store(engine, ann.id, [late]).outcomes == {late["id"]: browser_queue.CLAIM_LOST}
    assert _fill(engine, ann.id, exclude=[held[0]]) == [ids[2]]
    with write_session(engine) as session:
        session.execute(update(CandidateClaim).values(expires_at=utcnow() - timedelta(minutes=1)))
    on_time = _label(ids[2])
    assert _store(engine, ann.id, [on_time]).outcomes == {on_time["id"]: "saved"}


def test_labels_per_candidate_bounds_who_holds_a_candidate_ahead(engine: Engine) -> None:
    ids = add_candidates(engine, 5)
    people = [add_user(engine, f"a{i}") for i in range(3)]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
    held = [_fill(engine, person.id, size=4) for person in people]
    handed = Counter(candidate_id for mine in held for candidate_id in mine)
    assert max(handed.values()) <= 2
    assert held[0] == held[1] == ids[:4] and held[2] == [ids[4]]


def test_another_accounts_decision_id_is_neither_stored_nor_answered(engine: Engine) -> None:
    ids = add_candidates(engine, 2)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    _fill(engine, ann.id, size=1)
    _fill(engine, bob.id, size=1)
    sent = _label(ids[0])
    assert _store(engine, ann.id, [sent]).outcomes == {sent["id"]: "saved"}
    assert _store(engine, bob.id, [{**sent, "item": ids[1]}]).outcomes == {}
    # A candidate that does not exist is refused, and the decisions sent with it are stored.
    missing, other = _label(ids[1] + 1000), _label(ids[1])
    assert _store(engine, bob.id, [missing, other]).outcomes == {missing["id"]: browser_queue.NOT_A_DECISION,
                                                                 other["id"]: "saved"}
    with read_session(engine) as session:
        assert sorted(session.execute(select(Annotation.annotator_id)).scalars()) == [ann.id, bob.id]


_FIELDS = st.sampled_from(["id", "item", "human_check", "difficulty_eval", "comment", "key", "spent", "skip"])
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**13), st.floats(allow_nan=True), st.text(max_size=40),
                    st.lists(st.integers(), max_size=2))


@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=40),
                          st.dictionaries(_FIELDS, _VALUES, max_size=8)), max_size=8))
def test_whatever_the_browser_sends_is_parsed_into_decisions_or_refusals(raw: list[object]) -> None:
    for entry in browser_queue.parse(raw):
        if isinstance(entry, str):
            assert 8 <= len(entry) <= 36
            continue
        assert 1 <= entry.candidate_id < 2**31 and (entry.key_ms is None or 0 <= entry.key_ms <= 1e14)
        assert entry.skip or (entry.human_check, entry.difficulty_eval) in {(0, None), (1, 0), (1, 1)}
