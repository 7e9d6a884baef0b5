"""A hostile dataset in real headless Chromium (issue 17, item 2): links, images and HTML pointing at a local
server that records every request, Streamlit directives, emoji and icon codes, math with blank lines and
`\\href`, in a question, a rewritten question and condition, an unsolvable reason, a comment, a review tag
and a model response. Annotate, Browse, Review and Adjudicate show all of it as text: no request reaches the
server, no link or image with its address is in the page, and the literal text is on screen."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
from tests.support.waiting import wait_for
from ui.markdown import JOINER

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse"


class Tracker:
    """An HTTP server on 127.0.0.1 that records the path of every request and answers 404.

    Streamlit's own probes (`/_stcore/...`) are not recorded: the tracker may get the port of an earlier test's app
    server, whose page, still open in the shared browser, keeps asking it whether it is back. The hostile texts
    name other paths."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        tracker = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if not self.path.startswith("/_stcore/"):
                    tracker.paths.append(self.path)
                self.send_response(404)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile(field: str, url: str) -> str:
    """Text that would fetch `url/...`, link to it, or style itself if it were rendered as anything but text."""
    return (
        f"{field} starts $x\n\n![m]({url}/{field}/math-image.png)$ then [link-{field}]({url}/{field}/link) "
        f"![img-{field}]({url}/{field}/image.png) <img src=\"{url}/{field}/html.png\"> :red[red-{field}] "
        f":material/home: :smile: **bold-{field}** $\\href{{{url}/{field}/href}}{{click}}$ "
        f"$\\includegraphics{{{url}/{field}/graphic.png}}$ {url}/{field}/bare www.example.com ends"
    )


# What each field must show literally (whitespace aside): a sample of its hostile parts.
def literals(field: str, url: str) -> list[str]:
    return [f"[link-{field}]({url}/{field}/link)", f":red[red-{field}]", f"**bold-{field}**",
            f"$\\href{{{url}/{field}/href}}{{click}}$", f"<img src=\"{url}/{field}/html.png\">",
            ":material/home: :smile:", f"{url}/{field}/bare www.example.com", f"$x ![m]({url}/{field}/math-image.png)$"]


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    running = Tracker()
    yield running
    running.close()


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


def settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def shown_text(page) -> str:  # type: ignore[no-untyped-def]
    """The page's text as a person reads it: the joiners (invisible) dropped, whitespace folded."""
    return " ".join(page.evaluate("document.body.innerText").replace(JOINER, "").split())


def assert_inert(page, tracker: Tracker, fields: list[str]) -> None:  # type: ignore[no-untyped-def]
    """No link or image to the tracker (or made from bare addresses) in the page; each field's text literal."""
    assert page.locator(f"a[href*='{tracker.url}'], a[href*='example.com'], a[href^='mailto']").count() == 0
    assert page.locator(f"img[src*='{tracker.url}'], [style*='{tracker.url}']").count() == 0
    # (Streamlit gives headings an anchor link to themselves, href="#...": not data.)
    found = page.locator("[data-testid=stMarkdownContainer] a:not([href^='#']), [data-testid=stMarkdownContainer] img")
    assert found.count() == 0, [found.nth(i).evaluate("e => e.outerHTML") for i in range(found.count())]
    assert page.locator(".stMarkdownColoredText, .stMarkdownBadge").filter(has_text="red-").count() == 0
    assert page.locator("[data-testid=stMarkdownContainer] strong").filter(has_text="bold-").count() == 0
    text = shown_text(page)
    for field in fields:
        for literal in literals(field, tracker.url):
            assert " ".join(literal.split()) in text, (field, literal)


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
    page.locator(".st-key-skip").wait_for(state="detached")
    page.get_by_text("Select a row to open the candidate.").wait_for()
    grid = page.locator("[data-testid=stDataFrame]").bounding_box()
    assert grid is not None
    page.mouse.click(grid["x"] + 12, grid["y"] + 35 + 17)  # the first row's selection box
    page.get_by_text("Labels", exact=True).wait_for()  # not the grid's "labels" column
    settled(page)
    assert_inert(page, tracker, ["question", "rewritten", "condition", "reason"])

    # Review: the model response and the tag.
    page.get_by_role("link", name="Review").click()
    page.get_by_text("Response").first.wait_for()
    settled(page)
    assert_inert(page, tracker, ["response"])
    assert f"tag [t]({tracker.url}/tag/link) :red[red-tag]" in shown_text(page)

    # Adjudicate: the disputed candidate (the comment is in its labels table, a grid of plain text).
    page.get_by_role("link", name="Adjudicate").click()
    page.get_by_role("heading", name="gsm_4_contradict_1").wait_for()
    settled(page)
    assert_inert(page, tracker, ["question", "rewritten", "condition", "reason"])

    # Positive control: an image the page itself adds does reach the tracker, so the tracker would have seen
    # the others; nothing else ever did.
    page.evaluate(f"() => {{ const i = document.createElement('img'); i.src = '{tracker.url}/control.png';"
                  " document.body.appendChild(i); }")
    wait_for(lambda: "/control.png" in tracker.paths, 30, "the control image's request")
    assert tracker.paths == ["/control.png"]
    page.close()
