"""The Adjudicate page (AppTest, real SQLite file): disputes lowest agreement first, decided with keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from streamlit.testing.v1 import AppTest

from annotator.accounts import auth
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import AnnotationEvent, Candidate
from annotator.labelling import labels
from tests.support.candidates import add_candidates, add_user, sign_in_app

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "adjudicate.py")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return get_engine(f"sqlite:///{tmp_path / 'adjudicate.sqlite'}")


def _open(engine: Engine, name: str, role: str) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    sign_in_app(app, engine, add_user(engine, name, role=role))
    app.session_state["adjudicate_ready"] = True  # the browser's report that the buttons work (`ui.ready`)
    return app.run()


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
    assert app.markdown[0].value == "#### math\\_0\\_remove\\_1"
    table = app.dataframe[0].value
    assert list(table["annotator"]) == ["ann", "bea", "cy"]
    assert list(table["label"]) == ["unsolvable · simple", "not acceptable", "unsolvable · hard"]
    assert table["comment"].iloc[0].startswith("<b>")  # a dataframe cell: text, never HTML

    app.text_input(key="adjudicate_comment").input("bea is right")
    app.button(key="adjudicate_0").click().run()
    assert not app.exception, app.exception
    assert app.markdown[0].value == "#### math\\_2\\_remove\\_1"
    app.button(key="adjudicate_1").click().run()
    assert "No disputed candidates left" in app.success[0].value

    with read_session(engine) as session:
        resolved = {c.id: (c.human_check, c.difficulty_eval, c.label_source)
                    for c in session.execute(select(Candidate)).scalars()}
        events = session.execute(select(AnnotationEvent.candidate_id, AnnotationEvent.new).where(
            AnnotationEvent.action == "adjudicate").order_by(AnnotationEvent.id)).all()
    assert resolved == {ids[0]: (0, None, "adjudicated"), ids[1]: (1, 0, "unanimous"), ids[2]: (1, 0, "adjudicated")}
    assert [(cid, new["comment"]) for cid, new in events] == [(ids[0], "bea is right"), (ids[2], None)]


def test_annotators_may_not_adjudicate(engine: Engine) -> None:
    _dispute(engine)
    app = _open(engine, "someone", "annotator")
    assert [e.value for e in app.error] == ["Only reviewers and admins may open this page; you are signed in as "
                                           "someone (annotator)."]
    assert not app.button


def test_a_second_reviewer_is_told_who_decided_meanwhile_and_overrides_with_a_second_press(engine: Engine) -> None:
    ids = _dispute(engine)
    rev, other = _open(engine, "rev", "reviewer"), _open(engine, "boss", "admin")
    assert rev.markdown[0].value == other.markdown[0].value == "#### math\\_0\\_remove\\_1"
    rev.button(key="adjudicate_0").click().run()  # rev decides "not acceptable" first
    other.button(key="adjudicate_2").click().run()  # boss, still looking at it, presses "hard"
    assert not other.exception, other.exception
    status = other.caption[0].value
    assert "rev decided this dispute meanwhile: not acceptable." in status
    assert "Press the same key again to override" in status
    assert other.markdown[0].value == "#### math\\_0\\_remove\\_1"  # still on screen
    with read_session(engine) as session:
        assert session.get(Candidate, ids[0]).human_check == 0  # rev's decision stands
    other.button(key="adjudicate_2").click().run()
    assert not other.exception, other.exception
    with read_session(engine) as session:
        assert (session.get(Candidate, ids[0]).human_check, session.get(Candidate, ids[0]).difficulty_eval) == (1, 1)
        who = session.execute(select(AnnotationEvent.annotator_id).where(
            AnnotationEvent.action == "adjudicate").order_by(AnnotationEvent.id)).scalars().all()
    assert len(who) == 2 and who[0] != who[1]


def test_a_disabled_reviewer_decides_nothing_and_is_signed_out(engine: Engine) -> None:
    _dispute(engine)
    app = _open(engine, "rev", "reviewer")
    app.session_state["auth_recheck_at"] = float("inf")  # the periodic sign-in check is not due
    with write_session(engine) as session:
        auth.set_active(session, name="rev", active=False)
    app.button(key="adjudicate_0").click().run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert session.execute(select(AnnotationEvent).where(AnnotationEvent.action == "adjudicate")).first() is None
    assert app.session_state["auth_message"] == "Signed out: your account has been disabled; nothing was saved."


def test_the_audit_queue_says_how_to_draw_a_sample_then_walks_it(engine: Engine) -> None:
    """No sample: the page says how to draw one; drawn: its candidates in order, labels hidden, `1` / `0` stored with
    the comment, and the disputes queue still there when chosen back."""
    from annotator.database.models import AuditItem
    from annotator.labelling import audit

    _dispute(engine)  # all three resolve to human_check 1 over one label asked for: vetted
    app = _open(engine, "rev", "reviewer")
    app.selectbox(key="adjudicate_queue").select("Audit sample").run()
    assert not app.exception, app.exception
    assert app.markdown[0].value == "#### Nothing to audit"
    assert "python -m annotator audit draw --size N --seed S --by NAME" in app.info[0].value

    with write_session(engine) as session:
        audit.draw(session, size=5, seed=2, drawn_by=app.session_state["user"].id)
    app.selectbox(key="adjudicate_queue").select("Disputes").run()
    assert app.markdown[0].value == "#### math\\_0\\_remove\\_1"
    with read_session(engine) as session:
        order = [(row["data_id"], session.execute(select(Candidate.id).where(Candidate.data_id == row["data_id"]))
                  .scalar_one()) for row in audit.sample_rows(session)]
    app.selectbox(key="adjudicate_queue").select("Audit sample").run()
    assert app.markdown[0].value == "#### " + order[0][0].replace("_", "\\_")
    assert not app.dataframe  # the re-check is the reviewer's own: no labels shown
    assert "Left to audit:** 3" in app.caption[0].value
    app.text_input(key="adjudicate_comment").input("still solvable")
    app.button(key="adjudicate_audit_0").click().run()
    assert not app.exception, app.exception
    assert app.markdown[0].value == "#### " + order[1][0].replace("_", "\\_")
    with read_session(engine) as session:
        stored = session.execute(select(AuditItem.candidate_id, AuditItem.unsolvable, AuditItem.comment)
                                 .where(AuditItem.unsolvable.is_not(None))).all()
    assert [tuple(row) for row in stored] == [(order[0][1], 0, "still solvable")]
