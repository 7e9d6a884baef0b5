"""The Adjudicate page (AppTest, real SQLite file): disputes lowest agreement first, decided with keys."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from streamlit.testing.v1 import AppTest

from annotator.accounts import auth
from annotator.database.engine import read_session, write_session
from annotator.database.models import AnnotationEvent, AuditItem, Candidate
from annotator.labelling import audit, labels
from annotator.labelling import browser_adjudication as queues
from tests.support import queue_component
from tests.support.candidates import add_candidates, add_user, sign_in_app

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "adjudicate.py")
COMPONENT, AUDIT_COMPONENT = "adjudicate_adjudicate_queue", "adjudicate_audit_queue"


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _open(engine: Engine, name: str, role: str) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    sign_in_app(app, engine, add_user(engine, name, role=role))
    return app.run()


def _on_screen(app: AppTest) -> dict:
    """The item on screen (the first of the order), as the page handed it to the browser."""
    data = queue_component.data(app)
    items = {item["id"]: item for item in data["items"]}
    return items[data["order"][0]] if data["order"] else {}


def _headings(app: AppTest) -> list[str]:
    data = queue_component.data(app)
    items = {item["id"]: item["heading"] for item in data["items"]}
    return [items[i] for i in data["order"]]


def _dispute(engine: Engine) -> list[int]:
    ids = add_candidates(engine, 3)
    a, b, c = add_user(engine, "ann"), add_user(engine, "bea"), add_user(engine, "cy")
    chosen = {a.id: [(1, 0), (1, 0), (1, 0)], b.id: [(0, None), (1, 0), (1, 1)], c.id: [(1, 1), (1, 0), (1, 0)]}
    with write_session(engine) as session:
        for annotator_id, values in chosen.items():
            for candidate_id, (check, difficulty) in zip(ids, values):
                labels.record_label(session, candidate_id=candidate_id, annotator_id=annotator_id, human_check=check,
                                    difficulty_eval=difficulty, comment=f"<b>{annotator_id}</b> says so")
    return ids


def test_reviewer_settles_disputes_lowest_agreement_first(engine: Engine) -> None:
    ids = _dispute(engine)  # candidate 0: three different labels; 1: unanimous; 2: 2 of 3
    app = _open(engine, "rev", "reviewer")
    assert not app.exception, app.exception
    assert _headings(app)[0] == "math_0_remove_1"
    data = queue_component.data(app)
    assert [spec["key"] for spec in data["page"]["keys"]] == ["1", "2", "0", "S", "B"]
    assert "Disputes left: 2" in data["message"]
    table = _on_screen(app)["tables"][0]
    assert [row[0] for row in table["rows"]] == ["ann", "bea", "cy"]
    assert [row[1] for row in table["rows"]] == ["unsolvable · simple", "not acceptable", "unsolvable · hard"]
    assert table["rows"][0][2].startswith("<b>")  # shown as text by the browser, never as HTML

    queue_component.press(app, "0", comment="bea is right", component=COMPONENT)
    assert _headings(app) == ["math_2_remove_1"]
    queue_component.press(app, "1", component=COMPONENT)
    assert queue_component.data(app)["empty"] == "No disputed candidates left."

    with read_session(engine) as session:
        resolved = {c.id: (c.human_check, c.difficulty_eval, c.label_source)
                    for c in session.execute(select(Candidate)).scalars()}
        events = session.execute(select(AnnotationEvent.candidate_id, AnnotationEvent.new).where(
            AnnotationEvent.action == "adjudicate").order_by(AnnotationEvent.id)).all()
    assert resolved == {ids[0]: (0, None, "adjudicated"), ids[1]: (1, 0, "unanimous"), ids[2]: (1, 0, "adjudicated")}
    assert [(cid, new["comment"]) for cid, new in events] == [(ids[0], "bea is right"), (ids[2], None)]


def test_the_count_left_takes_off_ones_own_decision_at_once_and_others_at_the_next_count(engine: Engine) -> None:
    ids = _dispute(engine)
    rev, other = _open(engine, "rev", "reviewer"), _open(engine, "boss", "admin")
    queue_component.press(rev, "0", component=COMPONENT)
    assert "Disputes left: 1" in queue_component.data(rev)["message"]
    # boss decides the other dispute: rev's count says so once it is counted again (`LEFT_RECOUNT_SECONDS`), not
    # before, and never takes rev's own decision off twice.
    other_dispute = next(i for i in queue_component.data(other)["order"] if i != ids[0])
    assert queue_component.send(other, [queue_component.decision(other_dispute, "1")],
                                component=COMPONENT) != {}
    queue_component.send(rev, [], component=COMPONENT)
    assert "Disputes left: 1" in queue_component.data(rev)["message"]
    rev.session_state["adjudicate"][queues.DISPUTES]["left"].recount()  # as if counted long ago
    queue_component.send(rev, [], component=COMPONENT)
    assert "Disputes left: 0" in queue_component.data(rev)["message"]


def test_annotators_may_not_adjudicate(engine: Engine) -> None:
    _dispute(engine)
    app = _open(engine, "someone", "annotator")
    assert [e.value for e in app.error] == ["Only reviewers and admins may open this page; you are signed in as "
                                           "someone (annotator)."]
    assert not app.button


def test_a_second_reviewer_is_told_who_decided_meanwhile_and_overrides_with_a_second_press(engine: Engine) -> None:
    ids = _dispute(engine)
    rev, other = _open(engine, "rev", "reviewer"), _open(engine, "boss", "admin")
    assert _headings(rev)[0] == _headings(other)[0] == "math_0_remove_1"  # two reviewers may hold one dispute
    queue_component.press(rev, "0", comment="bea is right", component=COMPONENT)  # rev decides first
    pressed = queue_component.decision(ids[0], "2")  # boss, still looking at it, presses "hard"
    outcome = queue_component.send(other, [pressed], component=COMPONENT)[pressed["id"]]
    assert outcome.startswith("not saved: rev decided this dispute meanwhile: not acceptable.")
    assert "Press the same key again to override" in outcome
    assert queue_component.acknowledged(other)["overridable"] == [pressed["id"]]
    data = queue_component.data(other)
    again = next(item for item in data["items"] if item["id"] == ids[0])  # sent again, with rev's decision
    assert again["tables"][1]["title"] == "Decisions" and again["tables"][1]["rows"][0][:3] == [
        "rev", "not acceptable", "bea is right"]
    with read_session(engine) as session:
        assert session.get(Candidate, ids[0]).human_check == 0  # rev's decision stands
    override = {**queue_component.decision(ids[0], "2"), "override": True}
    assert queue_component.send(other, [override], component=COMPONENT)[override["id"]] == "saved"
    with read_session(engine) as session:
        assert (session.get(Candidate, ids[0]).human_check, session.get(Candidate, ids[0]).difficulty_eval) == (1, 1)
        who = session.execute(select(AnnotationEvent.annotator_id).where(
            AnnotationEvent.action == "adjudicate").order_by(AnnotationEvent.id)).scalars().all()
    assert len(who) == 2 and who[0] != who[1]


def test_a_disabled_reviewer_decides_nothing_and_is_signed_out(engine: Engine) -> None:
    ids = _dispute(engine)
    app = _open(engine, "rev", "reviewer")
    app.session_state["auth_recheck_at"] = float("inf")  # the periodic sign-in check is not due
    with write_session(engine) as session:
        auth.set_active(session, name="rev", active=False)
    app.session_state[COMPONENT] = {"sent": {"decisions": [queue_component.decision(ids[0], "0")], "n": 1}}
    app.run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert session.execute(select(AnnotationEvent).where(AnnotationEvent.action == "adjudicate")).first() is None
    assert app.session_state["auth_message"] == "Signed out: your account has been disabled; nothing was saved."


def test_the_audit_queue_says_how_to_draw_a_sample_then_walks_it(engine: Engine) -> None:
    """No sample: the page says how to draw one; drawn: its candidates in order, labels hidden, `1` / `0` stored with
    the comment, and the disputes queue still there when chosen back."""
    _dispute(engine)  # all three resolve to human_check 1 over one label asked for: vetted
    app = _open(engine, "rev", "reviewer")
    app.selectbox(key="adjudicate_queue").select("Audit sample").run()
    assert not app.exception, app.exception
    data = queue_component.data(app)
    assert data["page"]["nothing"] == "Nothing to audit"
    assert [(spec["key"], spec.get("decision")) for spec in data["page"]["keys"]] == [
        ("1", {"human_check": 1}), ("0", {"human_check": 0}), ("S", None)]
    assert "python -m annotator audit draw --size N --seed S --by NAME" in data["empty"]

    with write_session(engine) as session:
        audit.draw(session, size=5, seed=2, drawn_by=app.session_state["user"].id)
    app.selectbox(key="adjudicate_queue").select("Disputes").run()
    assert _headings(app)[0] == "math_0_remove_1"
    with read_session(engine) as session:
        order = [(row["data_id"], session.execute(select(Candidate.id).where(Candidate.data_id == row["data_id"]))
                  .scalar_one()) for row in audit.sample_rows(session)]
    app.selectbox(key="adjudicate_queue").select("Audit sample").run()
    while queue_component.data(app)["again"]:  # the browser asks again until it holds the sample
        app.run()
    assert _headings(app) == [data_id for data_id, _ in order]
    shown = _on_screen(app)
    assert shown["tables"] == [] and shown["mine"] is None  # the re-check is the reviewer's own: no labels shown
    assert shown["labels"] == {"1": "Truly unsolvable", "0": "Not unsolvable"}
    assert "Left to audit: 3" in queue_component.data(app)["message"]
    queue_component.press(app, "0", comment="still solvable", component=AUDIT_COMPONENT)
    assert _headings(app) == [data_id for data_id, _ in order[1:]]
    with read_session(engine) as session:
        stored = session.execute(select(AuditItem.candidate_id, AuditItem.unsolvable, AuditItem.comment)
                                 .where(AuditItem.unsolvable.is_not(None))).all()
    assert [tuple(row) for row in stored] == [(order[0][1], 0, "still solvable")]


def test_a_decision_sent_while_the_database_is_busy_waits_and_is_stored_once_after(
    engine: Engine, set_environment: Callable[..., None]
) -> None:
    set_environment(ANNOTATOR_PAGE_BUSY_SECONDS="0.3")
    ids = _dispute(engine)
    app = _open(engine, "rev", "reviewer")
    made = queue_component.decision(ids[0], "0", comment="bea is right")
    holder = sqlite3.connect(engine.url.database, timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # as an admin's import holds it
    try:
        outcomes = queue_component.send(app, [made], component=COMPONENT)
        data = queue_component.data(app)
        assert made["id"] not in outcomes  # no answer: the browser keeps it and sends it again
        assert "The database is busy: your decisions wait in the browser" in data["message"]
        assert data["again"] == "soon"
    finally:
        holder.rollback()
        holder.close()
    for _ in range(2):  # sent again (its answer lost once more): stored once
        assert queue_component.send(app, [made], component=COMPONENT)[made["id"]] == "saved"
    assert "busy" not in queue_component.data(app)["message"]
    with read_session(engine) as session:
        events = session.execute(select(AnnotationEvent.decision_id).where(
            AnnotationEvent.action == "adjudicate")).scalars().all()
    assert events == [made["id"]]


def test_decisions_sent_before_the_other_queue_is_chosen_are_stored_on_the_switch(engine: Engine) -> None:
    """The browser shows only the chosen queue: what it sent of the disputes before the audit sample was chosen is
    stored then (sent again once the disputes are back, it is answered and stored nothing more)."""
    ids = _dispute(engine)
    app = _open(engine, "rev", "reviewer")
    made = queue_component.decision(ids[0], "0", comment="bea is right")
    app.session_state[COMPONENT] = {"sent": {"decisions": [made], "n": 1}}
    app.selectbox(key="adjudicate_queue").select("Audit sample").run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert session.get(Candidate, ids[0]).label_source == "adjudicated"
    app.selectbox(key="adjudicate_queue").select("Disputes").run()
    assert queue_component.send(app, [made], component=COMPONENT)[made["id"]] == "saved"
    with read_session(engine) as session:
        events = session.execute(select(AnnotationEvent.decision_id).where(
            AnnotationEvent.action == "adjudicate")).scalars().all()
    assert events == [made["id"]]
