"""Annotate's progress bars in real headless Chromium, keyboard only: a decision key moves
my bar and the project's, and the count of what is left, at once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.database.engine import get_engine
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.annotate_keys import PASSWORD, press, shows, sign_in
from tests.support.candidates import add_candidates, add_user

pytestmark = pytest.mark.e2e


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    add_user(get_engine(url), "ann", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _bars(page) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Each progress bar: (its value as the browser exposes it, its text)."""
    bars = page.locator("[data-testid=stProgress]")
    return [(bars.nth(i).get_by_role("progressbar").get_attribute("aria-valuenow") or "",
             bars.nth(i).inner_text().strip()) for i in range(bars.count())]


def test_a_key_moves_both_bars_and_the_count_left(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    add_candidates(get_engine(app.database_url), 4, data_source="aime")
    page = browser.new_page()
    sign_in(page, app.url)
    shows(page, "aime_0_remove_1")
    page.get_by_text(re.compile(r"0 done · 4 left for me")).wait_for()
    assert _bars(page) == [("0", "My queue: 0 done · 4 left for me"),
                           ("0", "Project: 0 of 4 candidates have 1 label(s)")]
    press(page, "1")
    shows(page, "aime_1_contradict_1")
    page.get_by_text(re.compile(r"1 done · 3 left for me")).wait_for()
    assert _bars(page) == [("25", "My queue: 1 done · 3 left for me"),
                           ("25", "Project: 1 of 4 candidates have 1 label(s)")]
    press(page, "s")  # a skip moves nothing
    shows(page, "aime_2_remove_1")
    press(page, "0")
    shows(page, "aime_3_contradict_1")
    page.get_by_text(re.compile(r"2 done · 2 left for me")).wait_for()
    assert _bars(page) == [("50", "My queue: 2 done · 2 left for me"),
                           ("50", "Project: 2 of 4 candidates have 1 label(s)")]
    page.close()
