"""Admins' writes check the account in their own transaction (`ui.writes.page_write`), as annotators' do: a
setting, a run, an import or a cancel by an account disabled a moment ago stores nothing and signs it out, even
before the periodic sign-in check is due; a busy database is a one-line message, and nothing is stored."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, func, select

from annotator.accounts import auth
from annotator.database.engine import read_session, write_session
from annotator.database.models import Problem, Run
from annotator.labelling import queue
from tests.support.evaluation_items import add_evaluation_items
from tests.support.pages import open_page

SIGNED_OUT = "Signed out: your account has been disabled; nothing was saved."


def _disable(app: Any, engine: Engine, name: str) -> None:
    app.session_state["auth_recheck_at"] = float("inf")  # the periodic sign-in check is not due
    with write_session(engine) as session:
        auth.set_active(session, name=name, active=False)


def _count(engine: Engine, table: type) -> int:
    with read_session(engine) as session:
        return session.execute(select(func.count()).select_from(table)).scalar_one()


def _signed_out(app: Any) -> bool:
    return "user" not in app.session_state and app.session_state["auth_message"] == SIGNED_OUT


def test_a_disabled_admin_changes_no_setting(engine: Engine) -> None:
    app = open_page("overview", engine, name="ada", role="admin")
    _disable(app, engine, "ada")
    app.number_input(key="settings_labels_per_candidate").set_value(3).run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert queue.labels_per_candidate(session) == 1
    assert _signed_out(app)


def test_a_disabled_admin_starts_no_run(engine: Engine) -> None:
    add_evaluation_items(engine)
    app = open_page("evaluate", engine, name="ada", role="admin")
    app.text_input(key="model").input("m-x")
    app.text_input(key="api_key_env").input("UNSET_PAGE_TEST_KEY")
    _disable(app, engine, "ada")
    next(b for b in app.button if b.label == "Start run").click()
    app.run()
    app.run()  # the press ends in st.rerun
    assert not app.exception, app.exception
    assert _count(engine, Run) == 0
    assert _signed_out(app)


def test_a_disabled_admin_imports_nothing(engine: Engine) -> None:
    app = open_page("import_export", engine, name="ada", role="admin")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        problem = {"data_source": "aime", "id": 1, "question": "q", "ground_truth": "2"}
        archive.writestr("aime.json", json.dumps([problem]))
    app.get("file_uploader")[0].set_value([("solve.zip", buffer.getvalue(), "application/zip")])
    app.run()
    _disable(app, engine, "ada")
    app.button(key="import_run").click().run()
    assert not app.exception, app.exception
    assert _count(engine, Problem) == 0
    assert _signed_out(app)


def test_a_setting_changed_while_the_database_is_busy_says_so_and_shows_the_stored_value(
    sqlite_engine: Engine, set_environment: Callable[..., None]
) -> None:
    set_environment(ANNOTATOR_PAGE_BUSY_SECONDS="0.3")
    app = open_page("overview", sqlite_engine, name="ada", role="admin")
    holder = sqlite3.connect(sqlite_engine.url.database, timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # as an import holds it
    try:
        app.number_input(key="settings_labels_per_candidate").set_value(3).run()
    finally:
        holder.rollback()
        holder.close()
    assert not app.exception, app.exception
    assert [w.value for w in app.warning] == ["The database is busy, your setting was not saved, press again."]
    assert app.number_input(key="settings_labels_per_candidate").value == 1
    with read_session(sqlite_engine) as session:
        assert queue.labels_per_candidate(session) == 1


def test_a_disabled_admin_does_not_change_whether_imported_labels_count(engine: Engine) -> None:
    app = open_page("overview", engine, name="ada", role="admin")
    _disable(app, engine, "ada")
    app.checkbox(key="settings_imported_labels_count").uncheck().run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert queue.imported_labels_count(session) is True
    assert _signed_out(app)
