"""Fresh figures in real headless Chromium, keyboard only: labels imported through the CLI a
moment before Team is opened are in its figures, and "Recompute now" recomputes them at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from annotator.database.engine import get_engine, write_session
from annotator.labelling import labels
from tests.conftest import PROJECT_ROOT
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_candidates, add_user
from tests.support.navigation import PASSWORD, go, sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    add_user(engine, "bob")
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        for candidate_id in add_candidates(engine, 3):
            labels.record_label(session, candidate_id=candidate_id, annotator_id=ann.id, human_check=1,
                                difficulty_eval=0, seconds_spent=20.0)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def items(page) -> str:  # type: ignore[no-untyped-def]
    """The number of items with a human_check label, as Team shows it (its first "Items" figure)."""
    metric = page.locator("[data-testid=stMetric]").filter(has_text="Items").first
    metric.wait_for()
    return metric.locator("[data-testid=stMetricValue]").inner_text()


def sheet(path: Path, count: int) -> Path:
    """An annotation sheet (ReliableMath Fig. 10) of `count` new candidates, each labelled."""
    rows = [
        {"unsol_id": f"gsm_{i}_remove_1", "data_source": "gsm", "question": f"Tom has {i} apples and buys 4 more.",
         "ground_truth": str(i + 4), "rewritten_condition": "buys 4 more",
         "rewritten_question": f"Tom has {i} apples and buys some more.", "unsolvable_reason": "unknown",
         "human_check": 1, "difficulty_eval": i % 2}
        for i in range(count)
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_team_includes_labels_imported_a_second_before_it_is_opened(app: RunningApp, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    sign_in(page, app.url)
    go(page, "Team")
    assert items(page) == "3"  # the figures now exist, seconds old when the import below lands
    go(page, "Overview")
    done = subprocess.run(
        [sys.executable, "-m", "annotator", "import", str(sheet(tmp_path / "bob.json", 4)), "--annotator", "bob"],
        cwd=PROJECT_ROOT, env={**os.environ, "ANNOTATOR_DATABASE_URL": app.database_url}, capture_output=True,
        text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    imported_at = time.monotonic()
    go(page, "Team")
    # Read as soon as the figures are drawn: the page's own run (not a later tick) shows them.
    assert items(page) == "7"
    assert time.monotonic() - imported_at < 30
    assert "being computed" not in page.locator("[data-testid=stCaptionContainer]").first.inner_text()
    page.close()


def test_recompute_now_recomputes_at_once(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page()
    sign_in(page, app.url)
    go(page, "Team")
    assert items(page) == "3"
    # A label written behind the app's back (no event, so no fingerprint sees it): only a recomputation does.
    engine = get_engine(app.database_url)
    [candidate_id] = add_candidates(engine, 1, start=100)
    with write_session(engine) as session:
        session.execute(text("INSERT INTO annotation (candidate_id, annotator_id, human_check, created_at, "
                             "updated_at) SELECT :c, id, 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00' "
                             "FROM annotator WHERE name = 'bob'"), {"c": candidate_id})
    page.get_by_role("button", name="Recompute now").press("Enter")
    expect(page.locator("[data-testid=stMetric]").filter(has_text="Items").first.locator(
        "[data-testid=stMetricValue]")).to_have_text("4")
    page.close()
