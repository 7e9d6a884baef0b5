"""Busy is not broken, in Chromium: while another connection holds SQLite's write lock (a real `BEGIN IMMEDIATE`,
as an admin's import does), a key on Annotate shows the next candidate at once and its decision waits in the
browser: the page says the database is busy and how many wait, nothing is stored; once the lock is free the
decision is sent again by itself and stored once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Annotation
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.annotate_keys import PASSWORD, all_saved, press, shows, sign_in
from tests.support.candidates import add_candidates, add_user

pytestmark = pytest.mark.e2e

BUSY = "The database is busy: your decisions wait in the browser and are sent again in a moment."


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    add_user(get_engine(url), "ann", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log", env={"ANNOTATOR_PAGE_BUSY_SECONDS": "1"})
    yield running
    stop_app(running)


def _labels(app: RunningApp) -> dict[int, tuple[int, int | None]]:
    with read_session(get_engine(app.database_url)) as session:
        rows = session.execute(select(Annotation.candidate_id, Annotation.human_check, Annotation.difficulty_eval))
        return {row[0]: (row[1], row[2]) for row in rows}


def test_a_key_while_the_database_is_locked_waits_in_the_browser_and_is_stored_once_free(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    ids = add_candidates(get_engine(app.database_url), 3, data_source="aime")
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app.url)
    shows(page, "aime_0_remove_1")
    holder = sqlite3.connect(get_engine(app.database_url).url.database, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        press(page, "1")
        shows(page, "aime_1_contradict_1")  # at once: the browser held it
        page.get_by_text(BUSY).wait_for()
        assert page.locator(".aq-indicator").inner_text().startswith("1 waiting")
        assert page.get_by_text("Traceback").count() == 0
        assert _labels(app) == {}
    finally:
        holder.rollback()
        holder.close()
    all_saved(page)
    # The answer comes first (the indicator), the page's message with the next items a moment after it.
    expect(page.get_by_text(BUSY)).to_have_count(0)
    context.close()
    assert _labels(app) == {ids[0]: (1, 0)}
