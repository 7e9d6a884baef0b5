"""The Report's hallucination tags chart in real headless Chromium: a model and tag chosen
with the keyboard open Review on exactly those transcripts, its filters showing the choice."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.database.engine import get_engine, write_session
from annotator.transcripts import record_review
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_user
from tests.support.navigation import go, sign_in
from tests.support.transcripts import add_transcripts

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse"
INVENTED, IGNORED = "invented a missing value", "ignored the contradiction"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[RunningApp, list[str]]]:
    """Six transcripts of model-a and model-b, reviewed with tags; returns the data_ids of model-b's tagged
    INVENTED (what Review must show)."""
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    rev = add_user(engine, "rev", role="reviewer", password=PASSWORD)
    models = ["model-a", "model-b", "model-b", "model-b", "model-a", "model-b"]
    tags = [[INVENTED], [INVENTED], [IGNORED], [INVENTED, IGNORED], [IGNORED], []]
    ids = add_transcripts(engine, [{"model": model} for model in models])
    with write_session(engine) as session:
        for tid, chosen in zip(ids, tags):
            record_review(session, transcript_id=tid, annotator_id=rev.id, verdict="F", tags=chosen)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running, ["math_1_contradict_1", "math_3_contradict_1"]
    stop_app(running)


def test_a_model_and_tag_open_review_on_their_transcripts(app, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    running, expected = app
    page = browser.new_page()
    sign_in(page, running.url)
    go(page, "Report")
    choice = page.get_by_role("combobox", name=re.compile("Transcripts to open"))
    choice.focus()
    page.keyboard.type(f"model-b · {INVENTED}")
    page.keyboard.press("Enter")
    expect(choice).to_have_value(f"model-b · {INVENTED} (2)")
    page.locator(".st-key-open_review button").press("Enter")
    page.get_by_role("heading", name=re.compile(r"^math_\d+_\w+_1 · math · ")).wait_for()
    sidebar = page.locator("[data-testid=stSidebar]")
    expect(sidebar.get_by_role("combobox", name="Tag")).to_have_value(INVENTED)
    expect(sidebar.get_by_role("combobox", name="Model")).to_have_value("model-b")
    expect(page.get_by_text(re.compile(r"^1 of 2"))).to_be_visible()
    first = page.get_by_role("heading", name=re.compile(r"^math_\d+_\w+_1 · math · ")).inner_text().split(" · ")[0]
    assert first in expected
    page.close()


def test_a_click_on_a_bar_chooses_its_model_and_tag(app, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    running, expected = app
    page = browser.new_page()
    sign_in(page, running.url)
    go(page, "Report")
    choice = page.get_by_role("combobox", name=re.compile("Transcripts to open"))
    expect(choice).to_have_value(f"model-a · {IGNORED} (1)")  # the list's first pair until a bar is clicked
    # Vega's SVG names every bar (model, tag, count) for screen readers: the test clicks the one it means.
    page.locator(f".st-key-chart_tags path[aria-roledescription=bar][aria-label*='model: model-b; tag: {INVENTED};']"
                 ).click()
    expect(choice).to_have_value(f"model-b · {INVENTED} (2)")
    page.locator(".st-key-open_review button").click()
    expect(page.get_by_text(re.compile(r"^1 of 2"))).to_be_visible()
    first = page.get_by_role("heading", name=re.compile(r"^math_\d+_\w+_1 · math · ")).inner_text().split(" · ")[0]
    assert first in expected
    page.close()
