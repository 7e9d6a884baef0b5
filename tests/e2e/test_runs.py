"""Starting a run in real headless Chromium: a double click on Start run starts exactly one run, and a later
press with the same settings while it runs is refused with a message (issue 17, item 8)."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Run
from tests.e2e.conftest import ADMIN_PASSWORD, RunningApp, fill_evaluate_form, open_page
from tests.support.evaluation_items import scripted_solver
from tests.support.openai_server import OpenAIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

PASSWORD = ADMIN_PASSWORD


def _runs(url: str) -> list[tuple[int | None, str]]:
    with read_session(get_engine(url)) as session:
        return [(run.id, run.status) for run in session.scalars(select(Run).order_by(Run.id))]


def test_a_double_click_on_start_run_starts_one_run(evaluate_app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    with OpenAIServer(answer=scripted_solver) as server:
        server.hold_after(0)  # the run stays at work (running) until released
        page = browser.new_page()
        try:
            open_page(page, evaluate_app.url, name="boss", password=PASSWORD, link="Evaluate")
            fill_evaluate_form(page, server.url)
            page.get_by_role("button", name="Start run").dblclick()
            page.get_by_text("Run 1 started.").wait_for()
            page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
            assert page.get_by_role("button", name="Start run").is_enabled()
            assert page.locator("[data-testid=stAlertContentError]").count() == 0
            wait_for(lambda: server.held >= 1, 60, "the run to be at work")
            assert [run_id for run_id, _ in _runs(evaluate_app.database_url)] == [1]

            # Another session (a second tab, another admin) presses it with the same settings while it runs:
            # refused, with the reason on the page.
            other = browser.new_page()
            open_page(other, evaluate_app.url, name="boss", password=PASSWORD, link="Evaluate")
            other.get_by_role("textbox", name="Model").fill("m-x")
            other.get_by_role("textbox", name="Base URL (empty = OpenAI)").fill(server.url)
            other.get_by_role("textbox", name="API key variable").fill("E2E_RUN_KEY")
            other.get_by_role("button", name="Start run").click()
            other.get_by_text(re.compile(r"run 1 with the same settings is already (queued|running)")).wait_for()
            assert [run_id for run_id, _ in _runs(evaluate_app.database_url)] == [1]
            other.close()
        finally:
            server.release()
            page.close()
        wait_for(lambda: _runs(evaluate_app.database_url)[0][1] == "succeeded", 60, "the run to finish")
