"""The Team page's annotator accuracies in real headless Chromium, reached by keyboard: each annotator's Dawid-Skene
accuracy, its 95% interval and the number of items, as `agreement --json` gives them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.database.engine import get_engine, read_session
from annotator.labelling.accuracy import fit_from_database, page_resamples
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_user
from tests.support.navigation import PASSWORD, go, sign_in
from tests.support.simulated_team import simulate, store

pytestmark = pytest.mark.e2e


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    _, frame = simulate((0.95, 0.8, 0.65), 80, seed=17)
    store(engine, frame)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def test_team_shows_each_annotators_accuracy_interval_and_items(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page()
    sign_in(page, app.url)
    go(page, "Team")
    page.get_by_role("heading", name="Accuracy on human_check").wait_for()
    table = page.locator("[data-testid=stTable]").first
    expect(table.locator("tbody tr")).to_have_count(3)
    rows = {}
    for row in table.locator("tbody tr").all():
        cells = [cell.inner_text().strip() for cell in row.locator("th, td").all()]
        rows[cells[0]] = cells[1:]
    with read_session(get_engine(app.database_url)) as session:
        fitted = fit_from_database(session, resamples=page_resamples(240))
    expected = {row.annotator: [f"{row.accuracy:.3f}", f"{row.accuracy_low:.3f} – {row.accuracy_high:.3f}",
                                str(row.items)] for row in fitted.annotators}
    assert rows == expected
    shown = [float(rows[name][0]) for name in ("a0", "a1", "a2")]
    assert shown == sorted(shown, reverse=True) and all(re.fullmatch(r"0\.\d{3}", rows[n][0]) for n in rows)
    assert "Dawid-Skene" in page.get_by_text(re.compile("Dawid-Skene \\(1979\\) over 80 candidates")).inner_text()
    page.close()
