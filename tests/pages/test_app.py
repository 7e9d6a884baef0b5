"""Page logic with `streamlit.testing.v1.AppTest` on a real SQLite file: sign-in, first run, the annotate
queue, filters, roles and the browse page. (Keys and reloads are covered in tests/e2e.)"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from streamlit.testing.v1 import AppTest

from annotator.accounts import auth, throttle
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotation, AnnotationEvent, CandidateClaim
from annotator.labelling import browser_queue, queue
from tests.support import queue_component
from tests.support.candidates import add_candidates, add_user, sign_in_app
from ui.markdown import escape_markdown

ROOT = Path(__file__).resolve().parents[2]
ENTRY = str(ROOT / "app.py")
PASSWORD = "pw-1234-long-enough"


@pytest.fixture
def engine(tmp_path: Path, set_environment: Callable[..., None]) -> Engine:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    set_environment(ANNOTATOR_DATABASE_URL=url)
    return get_engine(url)


def _app() -> AppTest:
    app = AppTest.from_file(ENTRY, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.mark.parametrize(("name", "value", "allowed"), [
    ("ANNOTATOR_SESSION_HOURS", "soon", "a number of hours from 0.1 to 8,760"),
    ("ANNOTATOR_SESSION_RECHECK_SECONDS", "-1", "a number of seconds from 0 to 3,600"),
    ("ANNOTATOR_PAGE_BUSY_SECONDS", "nan", "a number of seconds from 0.05 to 60"),
    ("ANNOTATOR_HEARTBEAT_TIMEOUT", "inf", "a number of seconds from 0.5 to 86,400"),
    ("ANNOTATOR_DATABASE_URL", "db.sqlite",
     "a database URL: sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/NAME"),
])
def test_a_bad_environment_variable_is_one_line_on_the_page_and_nothing_else(
    tmp_path: Path, set_environment: Callable[..., None], name: str, value: str, allowed: str
) -> None:
    database = tmp_path / "annotator.sqlite"
    set_environment(**{"ANNOTATOR_DATABASE_URL": f"sqlite:///{database}", name: value})
    app = AppTest.from_file(ENTRY, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    assert [e.value for e in app.error] == [escape_markdown(f"The app cannot start: {name}={value!r}: {allowed}")]
    assert not app.text_input and not app.button  # no sign-in form
    assert not database.exists()


def _sign_in(app: AppTest, name: str, password: str = PASSWORD) -> AppTest:
    app.text_input[0].input(name)
    app.text_input[1].input(password)
    app.button[0].click()
    app.run()
    assert not app.exception, app.exception
    return app


def _labels(engine: Engine) -> dict[int, tuple[int, int | None, str | None]]:
    with read_session(engine) as session:
        rows = session.execute(
            select(Annotation.candidate_id, Annotation.human_check, Annotation.difficulty_eval, Annotation.comment)
        )
        return {row[0]: (row[1], row[2], row[3]) for row in rows}


def test_first_run_asks_for_the_first_admin(engine: Engine) -> None:
    app = _app()
    assert [t.value for t in app.title] == ["Welcome"]
    app.text_input[0].input("root")
    app.text_input[1].input(PASSWORD)
    app.text_input[2].input("other")
    app.button[0].click()
    app.run()
    assert [e.value for e in app.error] == ["The passwords differ."]
    # A short or common password is refused with the rule, and no account is made.
    for weak, reason in (("pw", "at least 12 characters"), ("Password1234", "common passwords")):
        app.text_input[1].input(weak)
        app.text_input[2].input(weak)
        app.button[0].click()
        app.run()
        assert len(app.error) == 1 and reason in app.error[0].value, app.error
        with read_session(engine) as session:
            assert not auth.has_accounts(session)
    app.text_input[1].input(PASSWORD)
    app.text_input[2].input(PASSWORD)
    app.button[0].click()
    app.run()
    assert not app.exception, app.exception
    assert app.session_state["user"] == auth.User(id=1, name="root", role="admin")
    with read_session(engine) as session:
        assert auth.authenticate(session, name="root", password=PASSWORD) is not None
    # With an account in place the next visitor gets the sign-in form.
    assert [t.value for t in _app().title] == ["Sign in"]


def test_wrong_password_is_refused(engine: Engine) -> None:
    add_user(engine, "ann", password=PASSWORD)
    app = _sign_in(_app(), "ann", "wrong")
    assert [e.value for e in app.error] == ["Unknown name or wrong password."]
    assert "user" not in app.session_state


def test_repeated_wrong_passwords_are_throttled_with_a_one_line_message(engine: Engine) -> None:
    add_user(engine, "ann", password=PASSWORD)
    app = _app()
    for _ in range(throttle.FREE_FAILURES):
        _sign_in(app, "ann", "wrong password")
        assert [e.value for e in app.error] == ["Unknown name or wrong password."]
    # Failures from elsewhere (other servers, other addresses) take the account past its own free failures, to a
    # wait long enough not to end during this test: this client, which never signed in to it, waits too.
    with write_session(engine) as session:
        for _ in range(throttle.ACCOUNT_FREE_FAILURES - throttle.FREE_FAILURES + 3):
            throttle.record_failure(session, attempt_keys=[throttle.attempt(name="ann", client=None).account])
    _sign_in(app, "ann", PASSWORD)
    assert len(app.error) == 1
    assert re.fullmatch(r"Too many failed sign-ins; try again in \d+ seconds\.", app.error[0].value), app.error
    assert "user" not in app.session_state


def test_a_key_pressed_after_the_account_was_disabled_stores_nothing(engine: Engine) -> None:
    add_candidates(engine, 2)
    add_user(engine, "ann", password=PASSWORD)
    app = _sign_in(_app(), "ann")
    app.session_state["auth_recheck_at"] = float("inf")  # the periodic sign-in check is not due
    with write_session(engine) as session:
        auth.set_active(session, name="ann", active=False)
    sent = queue_component.decision(queue_component.data(app)["items"][0]["id"], "1")
    app.session_state[queue_component.KEY] = {"sent": {"decisions": [sent], "n": 1}}
    app.run()
    assert not app.exception, app.exception
    assert _labels(engine) == {}
    assert "user" not in app.session_state
    assert [i.value for i in app.info] == ["Signed out: your account has been disabled; nothing was saved."]


def test_a_queue_opened_while_the_database_is_locked_says_busy_not_empty(
    engine: Engine, set_environment: Callable[..., None]
) -> None:
    set_environment(ANNOTATOR_PAGE_BUSY_SECONDS="0.3")
    add_candidates(engine, 2)
    app = AppTest.from_file(ENTRY, default_timeout=60)
    sign_in_app(app, engine, add_user(engine, "ann", password=PASSWORD))  # signed in before, e.g. a reload
    holder = sqlite3.connect(engine.url.database, timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # as an admin's import holds it
    try:
        app.run()
        assert not app.exception, app.exception
        data = queue_component.data(app)
        assert data["message"] == "The database is busy: your decisions wait in the browser and are sent again in a " \
            "moment."
        assert data["items"] == [] and data["empty"] == ""  # not "Nothing left in your queue"
        assert data["again"] == "soon"  # the browser asks again in a moment
    finally:
        holder.rollback()
        holder.close()
    app.run()
    assert queue_component.headings(app)[0] == "math_0_remove_1 · math · remove"
    assert queue_component.data(app)["message"] == ""


def test_decisions_are_recorded_under_the_signed_in_annotator(engine: Engine) -> None:
    ids = add_candidates(engine, browser_queue.AHEAD + 4)
    ann = add_user(engine, "ann", password=PASSWORD)
    app = _sign_in(_app(), "ann")
    # The one on screen and the next ones, each claimed for ann: a few at first, and the browser asks for more.
    headings = queue_component.headings(app)
    assert len(headings) == browser_queue.FIRST and queue_component.data(app)["again"] == "now"
    assert headings == ["math_0_remove_1 · math · remove", "math_1_contradict_1 · math · contradict"]
    with read_session(engine) as session:
        assert sorted(session.execute(select(CandidateClaim.candidate_id)).scalars()) == ids[:browser_queue.FIRST]
    while queue_component.data(app)["again"] == "now":  # each look claims a few more
        assert queue_component.send(app, []) == {}
    assert len(queue_component.headings(app)) == browser_queue.AHEAD + 1
    with read_session(engine) as session:
        assert sorted(session.execute(select(CandidateClaim.candidate_id)).scalars()) == ids[:-3]
    first = queue_component.press(app, "2", comment="removed the key condition")
    skipped = queue_component.press(app, "s")
    third = queue_component.press(app, "0")
    # The skipped one is not offered again in this session; the next ones are claimed as the first go.
    assert [item["id"] for item in queue_component.data(app)["items"]] == ids[3:]
    assert skipped["item"] == ids[1]
    assert _labels(engine) == {ids[0]: (1, 1, "removed the key condition"), ids[2]: (0, None, None)}
    # A decision sent again (its answer lost) is answered and not stored again; a change is an update event.
    again = queue_component.decision(ids[2], "1")
    outcomes = queue_component.send(app, [first, again])
    assert outcomes == {first["id"]: "saved", again["id"]: "saved"}
    assert _labels(engine)[ids[2]] == (1, 0, None)
    with read_session(engine) as session:
        events = session.execute(select(AnnotationEvent.candidate_id, AnnotationEvent.action,
                                        AnnotationEvent.annotator_id, AnnotationEvent.decision_id)).all()
    assert sorted(events, key=str) == sorted([(ids[0], "create", ann.id, first["id"]),
                                              (ids[2], "create", ann.id, third["id"]),
                                              (ids[2], "update", ann.id, again["id"])], key=str)


def test_filters_restrict_the_queue_and_survive_a_reload(engine: Engine) -> None:
    add_candidates(engine, 2, data_source="aime")
    add_candidates(engine, 2, data_source="minerva")
    ann = add_user(engine, "ann", password=PASSWORD)
    app = _sign_in(_app(), "ann")
    assert queue_component.headings(app)[0].startswith("aime_0")
    app.selectbox(key="queue_data_source").select("minerva")
    app.run()
    assert [h.split(" · ")[0] for h in queue_component.headings(app)] == ["minerva_0_remove_1",
                                                                         "minerva_1_contradict_1"]
    app.selectbox(key="queue_rewrite_type").select("contradict")
    app.run()
    assert queue_component.headings(app) == ["minerva_1_contradict_1 · minerva · contradict"]
    assert app.query_params == {"data_source": "minerva", "rewrite_type": "contradict"}
    queue_component.press(app, "1")
    assert queue_component.data(app)["empty"] == "Nothing left in your queue for these filters."
    # A reload: a new session with the address's filters.
    fresh = AppTest.from_file(ENTRY, default_timeout=60)
    fresh.query_params.update({"data_source": "minerva"})
    sign_in_app(fresh, engine, ann)
    fresh.run()
    assert fresh.selectbox(key="queue_data_source").value == "minerva"
    assert queue_component.headings(fresh)[0].startswith("minerva_0_remove_1")


def test_candidate_text_is_handed_over_as_text_and_typeset_math(engine: Engine) -> None:
    add_candidates(
        engine,
        1,
        rewritten_question="Find $x^2$. <script>alert(1)</script> [link](javascript:alert(2))",
        extra={"checks": [{"name": "treecut", "verdict": "unsolvable", "detail": "no unique solution"}]},
        llm_outputs={"verification": "<b>True</b>", "verdicts": [True, False]},
    )
    add_user(engine, "ann", password=PASSWORD)
    app = _sign_in(_app(), "ann")
    item = queue_component.data(app)["items"][0]
    rewritten = item["columns"][1]["runs"]
    assert {"t": " <script>alert(1)</script> [link](javascript:alert(2))", "k": "add"} in rewritten or any(
        "<script>alert(1)</script>" in run.get("t", "") for run in rewritten)
    maths = [run["m"] for run in rewritten if "m" in run]
    assert maths == ['<math display="inline"><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow></math>']
    fields = dict(item["fields"])
    verdicts = "treecut: unsolvable · verification: <b>True</b> · verdicts (in Model outputs)"
    assert fields["Verdicts"] == [{"t": verdicts}]
    lines = item["sections"]["Model outputs"]["lines"]
    assert lines[0] == {"name": "treecut", "runs": [{"t": "unsolvable — no unique solution"}]}
    assert lines[1] == {"name": "verification", "runs": [{"t": "<b>True</b>"}]}
    assert lines[2] == {"name": "verdicts", "json": "[\n true,\n false\n]"}
    assert any("human_check" in run.get("t", "") for paragraph in item["sections"]["Guideline"]["paragraphs"]
               for run in paragraph)
    assert item["sections"]["Solution"] == {}


def test_an_empty_database_links_to_the_overview(engine: Engine) -> None:
    add_user(engine, "ann", password=PASSWORD)
    app = _sign_in(_app(), "ann")
    assert "no candidates yet" in queue_component.data(app)["empty"]
    assert [link.label for link in app.get("page_link")] == ["Browse all candidates", "Overview, import and statistics"]
    # Once candidates arrive the page picks them up on its next run, without signing in again.
    add_candidates(engine, 1)
    app.run()
    assert queue_component.headings(app) == ["math_0_remove_1 · math · remove"]


def _overview(app: AppTest) -> AppTest:
    app.switch_page(str(ROOT / "app_pages" / "overview.py"))
    app.run()
    assert not app.exception, app.exception
    return app


def test_admins_set_labels_per_candidate_on_the_overview(engine: Engine) -> None:
    add_candidates(engine, 2)
    add_user(engine, "root", role="admin", password=PASSWORD)
    add_user(engine, "ann", password=PASSWORD)
    from annotator.labelling import queue

    annotator = _overview(_sign_in(_app(), "ann"))
    assert not annotator.number_input and "Project settings" not in [h.value for h in annotator.subheader]

    admin = _overview(_sign_in(_app(), "root"))
    assert admin.number_input(key="settings_labels_per_candidate").value == 1
    admin.number_input(key="settings_labels_per_candidate").set_value(3)
    admin.run()
    assert not admin.exception, admin.exception
    with read_session(engine) as session:
        assert queue.labels_per_candidate(session) == 3
    # A fresh visit shows the stored value.
    assert _overview(_sign_in(_app(), "root")).number_input(key="settings_labels_per_candidate").value == 3


def test_browse_shows_annotators_only_their_own_labels(engine: Engine) -> None:
    ids = add_candidates(engine, 60)
    ann = add_user(engine, "ann", password=PASSWORD)
    bob = add_user(engine, "bob", password=PASSWORD)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    from annotator.labelling import queue

    with write_session(engine) as session:
        queue.decide(session, annotator_id=ann.id, candidate_id=ids[0], human_check=1, difficulty_eval=0)
        queue.decide(session, annotator_id=bob.id, candidate_id=ids[1], human_check=0, difficulty_eval=None)

    app = _sign_in(_app(), "ann")
    app.switch_page(str(ROOT / "app_pages" / "browse.py"))
    app.run()
    assert not app.exception, app.exception
    assert app.selectbox(key="browse_state").options == ["any", "labelled by me", "not labelled by me"]
    assert "60 candidates · page 1 of 2" in [c.value for c in app.caption]
    table = app.dataframe[0].value
    assert len(table) == 50 and "labels" not in table.columns and "resolved label" not in table.columns
    assert list(table["my label"][:2]) == ["unsolvable · simple", ""]
    app.button(key="browse_next").click()
    app.run()
    assert len(app.dataframe[0].value) == 10
    app.selectbox(key="browse_state").select("labelled by me")
    app.run()
    assert list(app.dataframe[0].value["data_id"]) == ["math_0_remove_1"]

    reviewer = _sign_in(_app(), "rev")
    reviewer.switch_page(str(ROOT / "app_pages" / "browse.py"))
    reviewer.run()
    assert "rejected" in reviewer.selectbox(key="browse_state").options
    reviewer.selectbox(key="browse_state").select("rejected")
    reviewer.run()
    table = reviewer.dataframe[0].value
    assert list(table["data_id"]) == ["math_1_contradict_1"] and list(table["resolved label"]) == ["not acceptable"]
    reviewer.text_input(key="browse_search").input("MATH_5_")
    reviewer.selectbox(key="browse_state").select("any")
    reviewer.run()
    # Case-insensitive, and `_` is a literal underscore, not LIKE's any-character (math_50_... stays out).
    assert list(reviewer.dataframe[0].value["data_id"]) == ["math_5_contradict_1"]


def test_admins_mark_gold_items_from_browse_and_no_one_else_sees_them(engine: Engine) -> None:
    from annotator.labelling import gold

    ids = add_candidates(engine, 3)
    add_user(engine, "boss", role="admin", password=PASSWORD)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    browse_page = str(ROOT / "app_pages" / "browse.py")
    app = _sign_in(_app(), "boss")
    app.switch_page(browse_page)
    app.run()
    app.session_state["browse_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    app.run()
    assert not app.exception, app.exception
    control = app.get("button_group")[0]
    control.set_value(1).run()  # the second label: unsolvable · hard
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert gold.gold_label(session, candidate_id=ids[1]) == (1, 1)
    assert any(c.value.startswith("Gold label: unsolvable · hard ·") for c in app.caption)

    reviewer = _sign_in(_app(), "rev")
    reviewer.switch_page(browse_page)
    reviewer.run()
    reviewer.session_state["browse_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    reviewer.run()
    assert not reviewer.exception and not reviewer.get("button_group")
    assert "Gold item" not in [m.value for m in reviewer.markdown]


def test_a_refusal_has_the_look_of_every_page_that_cannot_be_shown(engine: Engine) -> None:
    """A page kept from a role: the heading, why and the way on that `/nosuchpage` shows too
    (tests/e2e/test_pages.py)."""
    from tests.support.pages import open_page

    app = open_page("team", engine, name="ann", role="annotator")
    assert not app.exception, app.exception
    assert [t.value for t in app.title] == ["Not open to you"]
    assert [e.value for e in app.error] == ["Only reviewers and admins may open this page; you are signed in as ann "
                                            "(annotator)."]
    assert [c.value for c in app.caption] == ["Choose a page in the sidebar."]


def _progress(app: AppTest) -> list[tuple[int, str]]:
    """The progress bars: (percent, text)."""
    return [(bar.proto.value, bar.proto.text) for bar in app.get("progress")]


def test_progress_bars_move_with_each_decision_and_follow_the_filters(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    others = add_candidates(engine, 2, data_source="other", start=100)
    add_user(engine, "ann", password=PASSWORD)
    bob, carol = add_user(engine, "bob"), add_user(engine, "carol")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for candidate_id in ids + others:  # one label of two each: ann's completes them
            queue.decide(session, annotator_id=bob.id, candidate_id=candidate_id, human_check=0, difficulty_eval=None)
    app = _sign_in(_app(), "ann")
    assert _progress(app) == [(0, "**My queue:** 0 done · **6 left** for me"),
                              (0, "**Project:** 0 of 6 candidates have 2 label(s)")]
    queue_component.press(app, "0")
    assert _progress(app) == [(16, "**My queue:** 1 done · **5 left** for me"),
                              (16, "**Project:** 1 of 6 candidates have 2 label(s)")]
    queue_component.press(app, "s")  # a skip moves nothing
    second = queue_component.press(app, "0")
    assert _progress(app) == [(33, "**My queue:** 2 done · **4 left** for me"),
                              (33, "**Project:** 2 of 6 candidates have 2 label(s)")]
    queue_component.send(app, [queue_component.decision(second["item"], "1")])  # a changed label moves nothing
    assert _progress(app) == [(33, "**My queue:** 2 done · **4 left** for me"),
                              (33, "**Project:** 2 of 6 candidates have 2 label(s)")]
    # Another filter counts afresh, with what others did meanwhile.
    with write_session(engine) as session:
        queue.decide(session, annotator_id=carol.id, candidate_id=others[0], human_check=0, difficulty_eval=None)
    app.selectbox(key="queue_data_source").set_value("other").run()
    assert _progress(app) == [(0, "**My queue:** 0 done · **1 left** for me"),
                              (50, "**Project:** 1 of 2 candidates have 2 label(s)")]
