"""The audit queue on Adjudicate in real headless Chromium, by keyboard only: the queue chosen in the sidebar (Tab,
type, Enter), `C`, a comment typed, `Esc`, then `0`, `S` and `1` (`2` and `B` are not the audit's keys); every
check is on the database."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotator, AuditItem, Candidate
from annotator.labelling import audit, labels
from tests.e2e.conftest import RunningApp, open_page, start_app, stop_app
from tests.support.candidates import add_candidates, add_user

pytestmark = pytest.mark.e2e

PASSWORD = "audit the release"
# Decision keys and Markdown inside: all of it is the comment, none of it a key or emphasis.
COMMENT = "x is **fixed** by the 2nd sentence; 1 0 s"
MAX_TABS = 80


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    """Six vetted candidates (four aime, two amc), a sample of three drawn with seed 1."""
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    ids = add_candidates(engine, 4, data_source="aime", rewrite_types=("remove",))
    ids += add_candidates(engine, 2, data_source="amc", rewrite_types=("contradict",))
    ann, rev = add_user(engine, "ann"), add_user(engine, "rev", role="reviewer", password=PASSWORD)
    with write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cid, ann.id, 1, 0) for cid in ids])
        audit.draw(session, size=3, seed=1, drawn_by=rev.id)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def shows(page, heading: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("heading", name=re.compile(rf"^{re.escape(heading)}$")).wait_for()
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def tab_to(page, widget_key: str) -> None:  # type: ignore[no-untyped-def]
    """Press Tab until the focus is in the widget with key `widget_key` (keyboard only, no clicks)."""
    inside = f"() => document.activeElement?.closest('.st-key-{widget_key}') !== null"
    for _ in range(MAX_TABS):
        if page.evaluate(inside):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {widget_key}")


def test_a_reviewer_audits_the_sample_by_keyboard(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    with read_session(engine) as session:
        order = [row["data_id"] for row in audit.sample_rows(session)]
    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    shows(page, "Nothing to adjudicate")  # no dispute: every label agrees

    tab_to(page, "adjudicate_queue")
    page.keyboard.type("Audit")
    page.get_by_role("option", name="Audit sample").wait_for()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement === document.body")  # the box let go of the focus
    shows(page, order[0])
    page.get_by_text("Left to audit: 3").wait_for()

    assert page.locator(".aq-table").count() == 0  # the re-check is the reviewer's own: no labels
    page.keyboard.press("c")
    page.keyboard.type(COMMENT)
    page.keyboard.press("Escape")
    assert not page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    page.keyboard.press("2")  # not an audit key: nothing happens
    page.keyboard.press("b")
    page.keyboard.press("0")
    shows(page, order[1])
    page.keyboard.press("s")
    shows(page, order[2])
    page.keyboard.press("1")
    page.get_by_text("Nothing left to audit (some skipped this session).").wait_for()
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")

    with read_session(engine) as session:
        stored = session.execute(
            select(Candidate.data_id, AuditItem.unsolvable, AuditItem.comment, Annotator.name)
            .join(Candidate, Candidate.id == AuditItem.candidate_id)
            .outerjoin(Annotator, Annotator.id == AuditItem.audited_by)
        ).all()
        estimate = audit.estimate(session)
    assert {row[0]: tuple(row[1:]) for row in stored} == {
        order[0]: (0, COMMENT, "rev"), order[1]: (None, None, None), order[2]: (1, None, "rev")}
    assert (estimate["unsolvable"], estimate["audited"], estimate["drawn"]) == (1, 2, 3)
