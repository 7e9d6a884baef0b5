"""A run's progress in real headless Chromium: Evaluate shows the run's progress within
seconds of Start, its log while it works, and the "Run N started" banner goes when the run ends."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import ADMIN_PASSWORD, RunningApp, fill_evaluate_form, open_page
from tests.support.evaluation_items import scripted_solver
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.e2e

PASSWORD = ADMIN_PASSWORD
# From the press of Start to the first progress on the page: the run's process starts (Python and its
# imports, seconds on a loaded machine), claims the run, writes its total; the page looks every 2 s.
SECONDS = 15


def test_evaluate_shows_progress_within_seconds_of_start(evaluate_app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    with OpenAIServer(answer=scripted_solver) as server:
        server.hold_after(2)  # two answers, then the run waits (running) until released
        page = browser.new_page()
        try:
            open_page(page, evaluate_app.url, name="boss", password=PASSWORD, link="Evaluate")
            fill_evaluate_form(page, server.url)
            started = time.monotonic()
            page.get_by_role("button", name="Start run").click()
            # Running, with its total known (the process wrote it when it claimed the run).
            running = re.compile(r"^Run 1: running, \d of [1-9]\d* responses done, \d+ requests sent")
            progress = page.get_by_text(running)
            try:
                progress.wait_for(timeout=SECONDS * 1000)
            except Exception as exc:
                shown = page.locator("[data-testid=stProgress]").all_inner_texts()
                raise AssertionError(f"no progress {SECONDS} s after Start; shown: {shown}") from exc
            print(f"progress {time.monotonic() - started:.1f} s after Start")
            assert time.monotonic() - started < SECONDS
            page.get_by_text("Run 1 started.").wait_for()
            # The log is on the page while the run works, as text.
            page.get_by_text("Run 1: log (its last lines)").wait_for()
            page.locator("[data-testid=stCode]").get_by_text(re.compile(r"1/\d+ responses done")).wait_for()
            server.release()
            # Once the run has ended the banner goes; the log (folded away now) ends with the run's summary.
            page.get_by_text("Run 1 started.").wait_for(state="detached", timeout=60_000)
            page.get_by_text(re.compile(r"run 1: succeeded; (\d+)/\1 responses")).wait_for(state="attached")
        finally:
            server.release()
            page.close()
