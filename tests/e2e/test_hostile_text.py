"""A hostile dataset in real headless Chromium: links, images and HTML pointing at a local
server that records every request, Streamlit directives, emoji and icon codes, math with blank lines and
`\\href`, in a question, a rewritten question and condition, an unsolvable reason, a comment, a review tag
and a model response. Annotate, Browse, Review and Adjudicate show all of it as text: no request reaches the
server, no link or image with its address is in the page, and the literal text is on screen."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.database.engine import get_engine, write_session
from annotator.database.models import Candidate
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.labelling.labels import record_label
from annotator.transcripts import set_tags
from tests.e2e.conftest import RunningApp, open_page, start_app, stop_app
from tests.support.candidates import add_user
from tests.support.grid import choose_first_row
from tests.support.hostile_text import Tracker, assert_inert, hostile, settled, shown_text
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse"


@pytest.fixture
def app(tmp_path: Path, tracker: Tracker) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "boss", role="admin", password=PASSWORD)
    alice, bob = add_user(engine, "alice"), add_user(engine, "bob")
    row = {
        "data_source": "gsm", "question": hostile("question", tracker.url), "ground_truth": "7",
        "rewritten_condition": hostile("condition", tracker.url),
        "rewritten_question": hostile("rewritten", tracker.url),
        "unsolvable_reason": hostile("reason", tracker.url), "human_check": "", "difficulty_eval": "",
    }
    sheet = tmp_path / "sheet.json"
    sheet.write_text(json.dumps([{**row, "unsol_id": "gsm_4_remove_1"}, {**row, "unsol_id": "gsm_4_contradict_1"}]),
                     encoding="utf-8")
    import_parts(read(sheet), engine=engine)
    transcripts = tmp_path / "transcripts.jsonl"
    transcripts.write_text(json.dumps({"data_id": "gsm_4", "model": "m-x", "prompt": "reliable",
                                       "response": hostile("response", tracker.url)}) + "\n", encoding="utf-8")
    import_parts(read(transcripts), engine=engine)
    with write_session(engine) as session:
        disputed = session.query(Candidate).filter(Candidate.data_id == "gsm_4_contradict_1").one()
        record_label(session, candidate_id=disputed.id, annotator_id=alice.id, human_check=1, difficulty_eval=0,
                     comment=hostile("comment", tracker.url))
        record_label(session, candidate_id=disputed.id, annotator_id=bob.id, human_check=0, difficulty_eval=None)
        set_tags(session, tags=[f"tag [t]({tracker.url}/tag/link) :red[red-tag] ![i]({tracker.url}/tag/i.png)"])
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def test_a_hostile_dataset_shows_as_text_on_every_page(app: RunningApp, tracker: Tracker, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    # Annotate: both questions (with the diff), the condition and the reason.
    open_page(page, app.url, name="boss", password=PASSWORD, link="Overview")  # signed in, Annotate ready
    page.get_by_role("link", name="Annotate").click()
    page.get_by_role("heading", name="gsm_4_remove_1 · gsm · remove").wait_for()
    settled(page)
    assert_inert(page, tracker, ["question", "rewritten", "condition", "reason"])

    # Browse: open the candidate by selecting its row.
    page.get_by_role("link", name="Browse").click()
    page.locator(".aq-root").wait_for(state="detached")
    page.get_by_text("Select a row to open the candidate.").wait_for()
    choose_first_row(page)
    page.get_by_text("Labels", exact=True).wait_for()  # not the grid's "labels" column
    settled(page)
    assert_inert(page, tracker, ["question", "rewritten", "condition", "reason"])

    # Review: the model response and the tag.
    page.get_by_role("link", name="Review").click()
    page.get_by_text("Response").first.wait_for()
    settled(page)
    assert_inert(page, tracker, ["response"])
    assert f"tag [t]({tracker.url}/tag/link) :red[red-tag]" in shown_text(page)

    # Adjudicate: the disputed candidate (the comment is in its labels table, cells of plain text).
    page.get_by_role("link", name="Adjudicate").click()
    page.get_by_role("heading", name="gsm_4_contradict_1").wait_for()
    settled(page)
    assert_inert(page, tracker, ["question", "rewritten", "condition", "reason", "comment"])

    # Positive control: an image the page itself adds does reach the tracker, so the tracker would have seen
    # the others; nothing else ever did.
    page.evaluate(f"() => {{ const i = document.createElement('img'); i.src = '{tracker.url}/control.png';"
                  " document.body.appendChild(i); }")
    wait_for(lambda: "/control.png" in tracker.paths, 30, "the control image's request")
    assert tracker.paths == ["/control.png"]
    page.close()
