"""Adjudication in real headless Chromium, by keys only; its provenance then shows in the annotation export
and the release manifest."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import AnnotationEvent, Candidate
from annotator.import_export.exports import export
from annotator.labelling import labels
from tests.e2e.conftest import RunningApp, open_page, start_app, stop_app
from tests.support.candidates import add_candidates, add_user
from tests.support.grid import choose_first_row
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

PASSWORD = "settle it please"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    ids = add_candidates(engine, 3, data_source="aime", rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    # aime_0: a tie; aime_1: the same label twice (no dispute); aime_2: a tie on difficulty.
    chosen = {ann.id: [(1, 0), (1, 1), (1, 1)], bea.id: [(0, None), (1, 1), (1, 0)]}
    with write_session(engine) as session:
        for annotator_id, values in chosen.items():
            for candidate_id, (check, difficulty) in zip(ids, values):
                labels.record_label(session, candidate_id=candidate_id, annotator_id=annotator_id,
                                    human_check=check, difficulty_eval=difficulty)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def shows(page, data_id: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("heading", name=re.compile(rf"^{re.escape(data_id)}$")).wait_for()
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def test_a_reviewer_settles_disputes_with_keys_and_the_export_says_so(app: RunningApp, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    page = context.new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    # Both disputes have agreement 1/2; the tie on human_check comes first.
    shows(page, "aime_0_remove_1")
    page.keyboard.press("0")
    shows(page, "aime_2_remove_1")
    page.keyboard.press("2")
    page.get_by_text("No disputed candidates left").wait_for()
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")
    context.close()

    engine = get_engine(app.database_url)
    with read_session(engine) as session:
        resolved = {c.data_id: (c.human_check, c.difficulty_eval, c.label_source)
                    for c in session.execute(select(Candidate)).scalars()}
        events = session.execute(select(AnnotationEvent.action).where(AnnotationEvent.action == "adjudicate")).all()
    assert resolved == {"aime_0_remove_1": (0, None, "adjudicated"), "aime_1_remove_1": (1, 1, "unanimous"),
                        "aime_2_remove_1": (1, 1, "adjudicated")}
    assert len(events) == 2
    export("annotation", tmp_path / "sheet", engine=engine)
    rows = json.loads((tmp_path / "sheet" / "annotation.json").read_text(encoding="utf-8"))
    assert [(r["unsol_id"], r["label_source"], r["adjudicated_by"]) for r in rows] == [
        ("aime_0_remove_1", "adjudicated", "rev"), ("aime_1_remove_1", "unanimous", None),
        ("aime_2_remove_1", "adjudicated", "rev")]
    manifest = export("reliablemath", tmp_path / "release", engine=engine)
    assert manifest["labels"]["counts"] == {"adjudicated": 1, "unanimous": 1}  # aime_0 was rejected
    assert manifest["labels"]["candidates"]["aime_2_remove_1"]["adjudicated_by"] == "rev"


FIRST_COMMENT = "x is **fixed** by the <b>second</b> sentence"
SECOND_COMMENT = "no: the second sentence only bounds x"


def comment_then(page, comment: str, key: str) -> None:  # type: ignore[no-untyped-def]
    """C into the comment, type it, Esc, then press `key`."""
    page.locator(".aq-root").wait_for()
    page.keyboard.press("c")
    page.keyboard.type(comment)
    page.keyboard.press("Escape")
    assert not page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    page.keyboard.press(key)


def table_cells(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The text of every cell of the tables of the dispute on screen."""
    return [text.strip() for text in page.locator(".aq-item:not([hidden]) td").all_inner_texts()]


def cells(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The text of every grid cell on the page (Browse's grids' cells, as text)."""
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
    return [text.strip() for text in page.locator("[role=gridcell]").all_inner_texts()]


def test_the_second_reviewer_sees_the_first_ones_comment_and_the_override_keeps_it(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    add_user(get_engine(app.database_url), "rex", role="reviewer", password=PASSWORD)
    first = browser.new_context(viewport={"width": 2400, "height": 1200}).new_page()
    second = browser.new_context(viewport={"width": 2400, "height": 1200}).new_page()
    for page, name in ((first, "rev"), (second, "rex")):  # both have the tie on screen
        open_page(page, app.url, name=name, password=PASSWORD, link="Adjudicate")
        shows(page, "aime_0_remove_1")
    comment_then(first, FIRST_COMMENT, "0")
    shows(first, "aime_2_remove_1")

    second.keyboard.press("1")
    second.get_by_role("alert").filter(has_text="rev decided this dispute meanwhile: not acceptable.").wait_for()
    shows(second, "aime_0_remove_1")  # back on screen, with rev's decision and comment
    second.get_by_text("Decisions", exact=True).wait_for()
    wait_for(lambda: FIRST_COMMENT in table_cells(second), 30, "the first reviewer's comment in the decisions")
    comment_then(second, SECOND_COMMENT, "1")  # the same key again: the override
    shows(second, "aime_2_remove_1")
    second.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")

    engine = get_engine(app.database_url)
    with read_session(engine) as session:
        candidate = session.execute(select(Candidate).where(Candidate.data_id == "aime_0_remove_1")).scalar_one()
        assert (candidate.human_check, candidate.difficulty_eval, candidate.label_source) == (1, 0, "adjudicated")

    second.get_by_role("link", name="Browse").click()
    second.get_by_text("Select a row to open the candidate.").wait_for()
    choose_first_row(second)  # aime_0
    second.get_by_text("History", exact=True).wait_for()
    wait_for(lambda: {FIRST_COMMENT, SECOND_COMMENT, "overrode rev's decision"} <= set(cells(second)), 30,
             "both decisions and their comments in Browse's history")
    first.context.close()
    second.context.close()
