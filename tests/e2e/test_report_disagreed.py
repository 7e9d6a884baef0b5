"""The Report's most-disagreed items in real headless Chromium: an item chosen with the
keyboard opens both models' responses side by side, hostile model text shown as text (no request, link,
image or styling from it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import update

from annotator.database.engine import get_engine, write_session
from annotator.database.models import Transcript
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_user
from tests.support.grid import choose_first_row
from tests.support.hostile_text import Tracker, assert_inert, hostile, settled
from tests.support.judged_answers import add_answers
from tests.support.navigation import go, sign_in

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse"


@pytest.fixture
def app(tmp_path: Path, tracker: Tracker) -> Iterator[tuple[RunningApp, list[str]]]:  # noqa: F811
    """Two models on three items: they agree on the first, differ on the others (listed by data_id, both
    disagreeing fully); each model's responses are hostile text naming the model. Returns the app and the
    listed items' data_ids."""
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    data_ids = add_answers(engine, [{"model-a": "S", "model-b": "S"}, {"model-a": "S", "model-b": "F"},
                                    {"model-a": "R", "model-b": "F"}])
    with write_session(engine) as session:
        for model in ("model-a", "model-b"):
            session.execute(update(Transcript).where(Transcript.model == model)
                            .values(response=hostile(f"response-{model}", tracker.url)))
    running = start_app(url, tmp_path / "streamlit.log")
    yield running, data_ids[1:]
    stop_app(running)


def test_a_disagreed_item_opens_both_responses_side_by_side(app, tracker: Tracker, browser) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    running, (first_id, data_id) = app
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, running.url)
    go(page, "Report")
    # The figures on the page are the newest (no rerun to swap new ones in will close the list while it is used).
    expect(page.get_by_text(re.compile("New figures are being computed"))).to_have_count(0, timeout=120_000)
    settled(page)
    choice = page.get_by_role("combobox", name=re.compile("Item to open side by side"))
    choice.focus()
    page.keyboard.type(data_id)
    page.get_by_role("option", name=re.compile(re.escape(data_id))).wait_for()  # the list, filtered
    page.keyboard.press("Enter")
    expect(choice).to_have_value(f"{data_id} · standard prompt")
    first, second = (page.get_by_role("heading", name=name, exact=True) for name in ("model-a", "model-b"))
    first.wait_for()
    second.wait_for()
    settled(page)
    # Side by side: one row, model-a's column left of model-b's, each holding its own model's response.
    a, b = first.bounding_box(), second.bounding_box()
    assert a is not None and b is not None and abs(a["y"] - b["y"]) < 2 and a["x"] + a["width"] <= b["x"]
    columns = page.locator("[data-testid=stColumn]")
    for model in ("model-a", "model-b"):
        column = columns.filter(has=page.get_by_role("heading", name=model, exact=True))
        expect(column).to_have_count(1)
        expect(column).to_contain_text(f"response-{model} starts")
        other = "model-b" if model == "model-a" else "model-a"
        expect(column).not_to_contain_text(f"response-{other} starts")
    expect(columns.filter(has_text="response-model-a starts")).to_contain_text("Refused")
    expect(columns.filter(has_text="response-model-b starts")).to_contain_text("Failed")
    assert_inert(page, tracker, ["response-model-a", "response-model-b"])
    assert tracker.paths == []

    # A click on the table's first row opens that item instead.
    choose_first_row(page, ".st-key-disagreed_table")
    expect(choice).to_have_value(f"{first_id} · standard prompt")
    expect(columns.filter(has_text="response-model-a starts")).to_contain_text("Successful")
    page.close()
