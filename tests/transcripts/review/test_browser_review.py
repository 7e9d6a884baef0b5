"""Review's queue held in the browser (`review.browser_review`) on SQLite and PostgreSQL: reviews sent as the
browser sends them, stored once by id with the key's time, refusals answered with why, and the window of the walk
the browser holds."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import SentDecision, Transcript, TranscriptEvent, utcnow
from annotator.transcripts import DEFAULT_TAGS, ReviewQueue, review_queue
from annotator.transcripts.review import browser_review
from tests.support.at_once import stored_twice_at_once
from tests.support.candidates import add_user
from tests.support.transcripts import add_transcripts


def _ms(moment: datetime) -> float:
    return moment.timestamp() * 1000


def _review(transcript_id: int, verdict: str | None = "S", *, tags: list[object] | None = None, comment: str = "",
            age_ms: float = 0, **more: object) -> dict[str, object]:
    """A review as the browser sends it, its key pressed `age_ms` ago; `verdict=None`: Enter (the judge's)."""
    made: dict[str, object] = {"id": str(uuid.uuid4()), "item": transcript_id, "tags": tags or [],
                               "comment": comment, "key": _ms(utcnow()) - age_ms, "spent": 900, **more}
    if verdict is None:
        made["agree"] = True
    else:
        made["verdict"] = verdict
    return made


def _store(engine: Engine, annotator_id: int, raw: list[dict[str, object]]) -> browser_review.Stored:
    with write_session(engine) as session:
        return browser_review.store(session, annotator_id=annotator_id, sent=browser_review.parse(raw))


def _reviews(engine: Engine) -> dict[int, tuple[object, ...]]:
    with read_session(engine) as session:
        return {row.id: (row.human, row.tags, row.comment) for row in session.execute(
            select(Transcript.id, Transcript.human, Transcript.tags, Transcript.comment))}


def test_a_review_sent_many_times_is_stored_once_with_the_time_of_its_key(engine: Engine) -> None:
    tids = add_transcripts(engine, [{"judge_class": "incorrect"}, {"judge_class": "unsolvable"}])
    rev = add_user(engine, "rev", role="reviewer")
    sent = [_review(tids[0], "R", tags=[DEFAULT_TAGS[2], DEFAULT_TAGS[0]], comment=" hedges ", age_ms=90_000),
            _review(tids[1], None)]  # Enter: the judge's S
    before = utcnow()
    first = _store(engine, rev.id, sent)
    assert first.outcomes == {sent[0]["id"]: "saved", sent[1]["id"]: "saved"} and first.reviewed == tids
    for _ in range(3):  # its answer lost each time: sent again, older by then
        again = _store(engine, rev.id, [{**entry, "key": float(entry["key"]) - 5000} for entry in sent])  # type: ignore[arg-type]
        assert again.outcomes == first.outcomes and again.reviewed == []
    assert _reviews(engine) == {tids[0]: ("R", [DEFAULT_TAGS[2], DEFAULT_TAGS[0]], "hedges"), tids[1]: ("S", [], None)}
    with read_session(engine) as session:
        events = {row.decision_id: row for row in session.execute(
            select(TranscriptEvent.decision_id, TranscriptEvent.at, TranscriptEvent.transcript_id,
                   TranscriptEvent.new))}
        received = session.execute(select(SentDecision.page, SentDecision.item_id).order_by(SentDecision.item_id)
                                   ).all()
        reviewed_at = session.get(Transcript, tids[0]).reviewed_at  # type: ignore[union-attr]
    assert set(events) == {sent[0]["id"], sent[1]["id"]}
    assert [tuple(row) for row in received] == [("review", tids[0]), ("review", tids[1])]
    # The key was pressed 90 s before the first arrival: the event and the review say so.
    key_time = events[sent[0]["id"]].at
    assert before - timedelta(seconds=91) <= key_time <= utcnow() - timedelta(seconds=89)
    assert reviewed_at == key_time
    assert events[sent[1]["id"]].new == {"human": "S", "tags": [], "comment": None}


def test_one_review_arriving_twice_at_once_is_stored_once(engine: Engine) -> None:
    """Two transactions store the same review at the same time (the browser's old and new connection after a
    drop): the second waits for the first's id, stores nothing, and the next sending gets the first's outcome."""
    [tid] = add_transcripts(engine, [{}])
    rev = add_user(engine, "rev", role="reviewer")
    sent = [_review(tid, "F", tags=[DEFAULT_TAGS[1]])]
    first, second = stored_twice_at_once(engine, lambda session: browser_review.store(
        session, annotator_id=rev.id, sent=browser_review.parse(sent)).outcomes)
    assert first == {sent[0]["id"]: "saved"}
    assert second.get(sent[0]["id"], "saved") == "saved"
    assert _store(engine, rev.id, sent).outcomes == {sent[0]["id"]: "saved"}
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(TranscriptEvent)).scalar_one() == 1
        assert session.execute(select(func.count()).select_from(SentDecision)).scalar_one() == 1


def test_refused_reviews_say_why_and_store_nothing_but_their_answer(engine: Engine) -> None:
    tids = add_transcripts(engine, [{"judge_class": None, "judge": None}, {}])
    rev = add_user(engine, "rev", role="reviewer")
    no_judge = _review(tids[0], None)
    bad_tag = _review(tids[1], "F", tags=["  "])
    missing = _review(tids[1] + 1000, "S")
    junk = {"id": str(uuid.uuid4()), "item": tids[1], "verdict": "X"}
    fine = _review(tids[1], "S", tags=["a new tag"])  # any well-formed tag, as the page's tag list may change
    outcomes = _store(engine, rev.id, [no_judge, bad_tag, missing, junk, fine]).outcomes
    assert outcomes == {
        no_judge["id"]: browser_review.NO_JUDGE,
        bad_tag["id"]: "not saved: a tag must be non-empty text, got '  '",
        missing["id"]: f"not saved: transcript {tids[1] + 1000} does not exist",
        junk["id"]: browser_review.NOT_A_DECISION,
        fine["id"]: "saved",
    }
    assert _reviews(engine) == {tids[0]: (None, None, None), tids[1]: ("S", ["a new tag"], None)}
    with read_session(engine) as session:
        assert session.execute(select(TranscriptEvent.decision_id)).scalars().all() == [fine["id"]]
        assert session.execute(select(func.count()).select_from(SentDecision)).scalar_one() == 5
    # Sent again, each keeps its first answer.
    assert _store(engine, rev.id, [no_judge, bad_tag, missing, junk, fine]).outcomes == outcomes


def test_a_review_cleared_and_the_same_review_again_keep_their_events(engine: Engine) -> None:
    [tid] = add_transcripts(engine, [{}])
    rev, other = add_user(engine, "rev", role="reviewer"), add_user(engine, "other", role="reviewer")
    first, clear = _review(tid, "R", age_ms=3000), _review(tid, None, clear=True, age_ms=2000)
    same = _review(tid, "R")
    assert set(_store(engine, rev.id, [first, clear, same]).outcomes.values()) == {"saved"}
    # Another account's id is neither stored again nor answered.
    assert _store(engine, other.id, [{**first, "verdict": "S"}]).outcomes == {}
    with read_session(engine) as session:
        events = session.execute(select(TranscriptEvent.action, TranscriptEvent.decision_id, TranscriptEvent.at)
                                 .order_by(TranscriptEvent.id)).all()
    assert [(e.action, e.decision_id) for e in events] == [("review", first["id"]), ("clear", clear["id"]),
                                                           ("review", same["id"])]
    assert [e.at for e in events] == sorted(e.at for e in events)
    assert _reviews(engine)[tid] == ("R", [], None)


def test_the_window_follows_the_walk_in_the_queues_order(engine: Engine) -> None:
    tids = add_transcripts(engine, [{} for _ in range(30)] + [{"differs_from_reference": True}])
    with read_session(engine) as session:
        order = review_queue(session, seed=7)
        walk = ReviewQueue.open(session, seed=7, page=8)
        start = browser_review.window(session, walk, position=0, ahead=5, behind=3)
        middle = browser_review.window(session, walk, position=12, ahead=5, behind=3)
        end = browser_review.window(session, walk, position=29, ahead=5, behind=3)
    assert order[0] == tids[30] and sorted(order) == sorted(tids)
    assert (start.start, start.ids, start.end) == (0, order[:6], None)
    assert (middle.start, middle.ids, middle.end) == (9, order[9:18], None)
    assert (end.start, end.ids, end.end) == (26, order[26:], 31)


_FIELDS = st.sampled_from(["id", "item", "verdict", "agree", "clear", "tags", "comment", "key"])
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**13), st.floats(allow_nan=True), st.text(max_size=40),
                    st.sampled_from(["S", "R", "F"]), st.lists(st.one_of(st.text(max_size=5), st.integers()),
                                                               max_size=11))


@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=40),
                          st.dictionaries(_FIELDS, _VALUES, max_size=8)), max_size=8))
def test_whatever_the_browser_sends_is_parsed_into_reviews_or_refusals(raw: list[object]) -> None:
    for entry in browser_review.parse(raw):
        if isinstance(entry, str):
            assert 8 <= len(entry) <= 36
            continue
        assert 1 <= entry.transcript_id < 2**31 and (entry.key_ms is None or 0 <= entry.key_ms <= 1e14)
        assert entry.clear or entry.agree or entry.verdict in ("S", "R", "F")
        assert len(entry.tags) <= 9 and all(isinstance(tag, str) for tag in entry.tags)
