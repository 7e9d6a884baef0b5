"""The keyboard never gets stuck, in real headless Chromium (`ui.keys.keyboard`).

On Review and Adjudicate (Annotate's keys: tests/e2e/test_annotate_queue.py): Tab into the comment, type it
(decision keys in it are text), `Esc`, one
key: the decision and the comment are saved exactly as typed. A sidebar filter chosen by keyboard (Tab, type,
Enter), or a switch turned (Tab, Space), then one key: it decides the filtered item instead of typing into the
box. Every check is on the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Adjudication, Annotator, Candidate, Transcript
from annotator.labelling import labels
from tests.e2e.conftest import RunningApp, open_page, start_app, stop_app
from tests.support.candidates import add_candidates, add_user
from tests.support.transcripts import add_transcripts

pytestmark = pytest.mark.e2e

PASSWORD = "keys never stick"
# Decision keys, Markdown and spaces inside: all of it is the comment, none of it a key.
COMMENT = "Bound x < 2 is **gone**; 1 2 0 s f r b n, see  two spaces"
MAX_TABS = 80


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "ann", password=PASSWORD)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def heading(page, pattern: str) -> str:  # type: ignore[no-untyped-def]
    """The workspace heading matching `pattern` once it shows and the run has ended."""
    found = page.get_by_role("heading", name=re.compile(pattern))
    found.wait_for()
    settled(page)
    return found.inner_text()


def tab_to(page, widget_key: str) -> None:  # type: ignore[no-untyped-def]
    """Press Tab until the focus is in the widget with key `widget_key` (keyboard only, no clicks)."""
    inside = f"() => document.activeElement?.closest('.st-key-{widget_key}') !== null"
    for _ in range(MAX_TABS):
        if page.evaluate(inside):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {widget_key}")


def comment_esc_key(page, comment_key: str, key: str, button: str) -> None:  # type: ignore[no-untyped-def]
    """Tab into the comment, type `COMMENT`, Esc, then press `key` once its button is there."""
    page.locator(f".st-key-{button} button").wait_for()
    tab_to(page, comment_key)
    page.keyboard.type(COMMENT)
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press(key)


def choose(page, widget_key: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Choose `option` in a select box by keyboard: Tab to it, type, Enter."""
    tab_to(page, widget_key)
    page.keyboard.type(option)
    page.get_by_role("option", name=option).wait_for()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement === document.body")  # the box let go of the focus


def sign_in(page, url: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in as the annotator; Annotate is the start page."""
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill("ann")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")


def ids_by_data_id(engine: Engine) -> dict[str, int]:
    with read_session(engine) as session:
        return dict(session.execute(select(Candidate.data_id, Candidate.id)).all())


def annotator_id(engine: Engine, name: str) -> int:
    with read_session(engine) as session:
        return session.execute(select(Annotator.id).where(Annotator.name == name)).scalar_one()


def test_adjudicate_comment_esc_key(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    ids = add_candidates(engine, 2, data_source="aime", rewrite_types=("remove",))
    bo, cy = add_user(engine, "bo"), add_user(engine, "cy")
    with write_session(engine) as session:
        for candidate_id in ids:  # two disputes, each a tie on human_check
            labels.record_label(session, candidate_id=candidate_id, annotator_id=bo.id, human_check=1,
                                difficulty_eval=0)
            labels.record_label(session, candidate_id=candidate_id, annotator_id=cy.id, human_check=0,
                                difficulty_eval=None)
    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    heading(page, r"^aime_0_remove_1$")
    page.keyboard.press("c")  # the queue's comment (its keys: tests/e2e/test_adjudicate_queue.py)
    page.keyboard.type(COMMENT)
    page.keyboard.press("Escape")
    page.keyboard.press("1")
    heading(page, r"^aime_1_remove_1$")
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")
    page.context.close()
    with read_session(engine) as session:
        rows = session.execute(select(Adjudication.candidate_id, Adjudication.annotator_id, Adjudication.human_check,
                                      Adjudication.difficulty_eval, Adjudication.comment)).all()
    assert [tuple(row) for row in rows] == [(ids[0], annotator_id(engine, "rev"), 1, 0, COMMENT)]


def _reviewed(engine: Engine) -> list[tuple[str, str, str | None, str | None]]:
    with read_session(engine) as session:
        rows = session.execute(select(Transcript.data_id, Transcript.model, Transcript.human, Transcript.comment)
                               .where(Transcript.human.is_not(None))).all()
    return [tuple(row) for row in rows]


def test_review_comment_esc_key(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    """Review's comment is the queue component's (`C` focuses it): typed, Esc, then R (Streamlit's own key, taken by
    the queue first) refuses with the comment."""
    engine = get_engine(app.database_url)
    add_transcripts(engine, [{"judge_class": "incorrect"}] * 2)
    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Review")
    first = heading(page, r"^math_\d_\w+_1 · math · ").split(" · ")[0]
    page.keyboard.press("c")
    page.keyboard.type(COMMENT)
    page.keyboard.press("Escape")
    assert not page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    page.keyboard.press("r")
    page.get_by_role("heading", name=re.compile(rf"^{first} ·")).wait_for(state="detached")
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")
    page.context.close()
    assert _reviewed(engine) == [(first, "model-a", "R", COMMENT)]


def test_review_filter_chosen_by_keyboard_then_a_key_decides(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    add_transcripts(engine, [{"model": "model-a"}, {"model": "model-b"}, {"model": "model-a"}])
    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Review")
    heading(page, r"^math_\d_\w+_1 · math · ")
    choose(page, "review_model", "model-b")
    page.get_by_text("1 of 1").wait_for()
    shown = heading(page, r"^math_\d_\w+_1 · math · ").split(" · ")[0]
    tab_to(page, "review_blind")  # a switch turned by keyboard lets go of the focus too
    page.keyboard.press("Space")
    page.get_by_text("in the queue because").wait_for(state="detached")  # blind: the reason is hidden
    page.wait_for_function("document.activeElement === document.body")
    page.keyboard.press("s")
    page.get_by_role("heading", name=re.compile(rf"^{shown} ·")).wait_for(state="detached")
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")
    page.context.close()
    assert _reviewed(engine) == [("math_1_contradict_1", "model-b", "S", None)]
