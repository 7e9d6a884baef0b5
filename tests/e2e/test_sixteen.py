"""Sixteen annotators at once in real headless Chromium, against one database (SQLite file and PostgreSQL).

As a new team would: everyone signs in at the same moment, then labels with the keyboard, each pressing the
first key as soon as their first candidate is on the page. Afterwards, in the database: every key pressed is
exactly one saved label, and with `labels_per_candidate` 1 no candidate went to two people.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from annotator.accounts import auth
from annotator.database.engine import get_engine, read_session
from annotator.database.models import Annotation, AnnotationEvent, Annotator
from annotator.labelling import browser_queue
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, RunningApp, start_app, stop_app
from tests.support.candidates import add_candidates

pytestmark = pytest.mark.e2e

PEOPLE = 16
KEYS_EACH = ("1", "2", "0", "1")
PASSWORD = "sixteen at nine"
HEADING = ".aq-heading"
BUSY = "The database is busy; please press Sign in again."
SIGN_IN_ATTEMPTS = 4
# Generous: sixteen Chromium pages, sixteen Argon2 checks and a Streamlit server share this machine's two cores.
STEP_TIMEOUT_MS = 180_000
# What a stuck annotator's browser holds, for the failure's message: the page's text alone does not say why.
QUEUE_STATE = """() => {
  const q = [...(window.__annotatorQueues?.values() || [])][0];
  return q && {heading: q.heading?.textContent, on_page: Boolean(q.root?.isConnected), order: q.order,
               decided: [...q.decided], items: [...q.items.keys()], pending: q.pending.length,
               indicator: q.indicator?.textContent, message: q.message?.textContent, empty: q.emptyText};
}"""


@pytest.fixture
def team_app(database_url: str, tmp_path: Path) -> Iterator[RunningApp]:
    engine = get_engine(database_url)
    # Enough for everyone's labels plus the candidates each browser holds ahead.
    add_candidates(engine, PEOPLE * (len(KEYS_EACH) + browser_queue.AHEAD + 1) + 8, data_source="aime")
    from annotator.database.engine import write_session

    with write_session(engine) as session:
        password_hash = auth.hash_password(PASSWORD)  # one Argon2 hash for all: the test is about signing in
        for i in range(PEOPLE):
            session.add(Annotator(name=f"expert{i:02d}", role="annotator", password_hash=password_hash))
    running = start_app(database_url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


async def _heading(page: Any) -> str:
    return await page.locator(HEADING).first.inner_text()


async def _open(browser: Any, url: str, name: str) -> tuple[Any, Any]:
    """A browser of one's own on the sign-in form, name and password typed in."""
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(STEP_TIMEOUT_MS)
    await page.goto(url, wait_until="commit")
    await page.get_by_role("textbox", name="Name").fill(name)
    await page.get_by_role("textbox", name="Password").fill(PASSWORD)
    return context, page


async def _annotator(context: Any, page: Any, start: asyncio.Event, report: dict[str, Any]) -> None:
    report["shown"], report["step"] = [], "sign-in"
    try:
        await start.wait()  # everyone presses Enter at the same moment
        await page.get_by_role("textbox", name="Password").press("Enter")
        report["step"] = "first candidate"
        # Sixteen Argon2 checks at once can hold the database past a sign-in's patience: the page then asks to press
        # Sign in again, and a person does.
        busy = page.get_by_text(BUSY)
        for attempt in range(1, SIGN_IN_ATTEMPTS):
            await page.locator(HEADING).filter(has_text=" · aime · ").or_(busy).first.wait_for()
            if not await busy.count():
                break
            report["signed in again"] = attempt
            await page.get_by_role("textbox", name="Password").fill(PASSWORD)
            await page.get_by_role("textbox", name="Password").press("Enter")
            await busy.wait_for(state="detached")
        await page.wait_for_function(f"document.querySelector({HEADING!r})?.innerText.includes(' · aime · ')")
        await page.locator(HEADING).first.wait_for(state="visible")  # as soon as the annotator can see it
        await page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
        report["errors"] = await page.locator("[data-testid=stException]").count()
        for i, key in enumerate(KEYS_EACH):
            before = await _heading(page)
            report["shown"].append(before.split(" · ")[0])
            report["step"] = f"key {i + 1} ({key}) on {before}"
            # The key is pressed as soon as the candidate is on screen.
            await page.keyboard.press(key)
            # The next key once the next candidate is on screen (not while the page is still claiming it).
            await page.wait_for_function(
                f"(before) => {{ const t = document.querySelector({HEADING!r})?.innerText;"
                " return t !== before && t?.includes(' · aime · '); }", arg=before
            )
        report["step"] = "saving"
        await page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'")
        report["step"] = "done"
    except Exception as exc:  # noqa: BLE001  (the test reports every annotator's stuck step at once)
        report["failure"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        report["queue"] = await page.evaluate(QUEUE_STATE)
    finally:
        await context.close()


def _run_team(url: str) -> dict[str, dict[str, Any]]:
    from playwright.async_api import async_playwright

    reports: dict[str, dict[str, Any]] = {f"expert{i:02d}": {} for i in range(PEOPLE)}

    async def main() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            # The pages load one after the other (sixteen at once only measure this machine's two cores);
            # then everyone signs in at the same moment and labels at once.
            pages = [await _open(browser, url, name) for name in reports]
            start = asyncio.Event()
            tasks = [asyncio.create_task(_annotator(context, page, start, report))
                     for (context, page), report in zip(pages, reports.values())]
            start.set()
            await asyncio.gather(*tasks)
            await browser.close()

    # A thread of its own: the package's sync Playwright keeps an event loop running in the test's thread.
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001  (re-raised in the test's thread)
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return reports


def test_sixteen_annotators_sign_in_at_once_and_every_key_is_one_label(team_app: RunningApp) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not at {CHROMIUM}")
    reports = _run_team(team_app.url)
    stuck = {name: (report["step"], report.get("failure"), report.get("queue"))
             for name, report in reports.items() if report["step"] != "done"}
    if stuck:  # whole (an assertion's message would be cut short)
        pytest.fail("stuck: " + json.dumps(stuck, indent=1, default=str))
    engine = get_engine(team_app.database_url)
    with read_session(engine) as session:
        per_person = dict(session.execute(
            select(Annotator.name, func.count(Annotation.id)).join(Annotation, Annotation.annotator_id == Annotator.id)
            .group_by(Annotator.name)
        ).all())
        labelled = session.execute(select(Annotation.candidate_id, func.count()).group_by(Annotation.candidate_id)
                                   ).all()
        events = session.execute(select(func.count()).select_from(AnnotationEvent)).scalar_one()
    log = team_app.log.read_text()
    assert "Traceback" not in log and "database is locked" not in log, log[-3000:]
    assert all(report["errors"] == 0 for report in reports.values())
    assert per_person == {name: len(KEYS_EACH) for name in reports}  # every key pressed is one label
    assert events == PEOPLE * len(KEYS_EACH)
    assert all(count == 1 for _, count in labelled) and len(labelled) == PEOPLE * len(KEYS_EACH)
    # Nobody saw a candidate someone else saw.
    seen = [data_id for report in reports.values() for data_id in report["shown"]]
    assert len(seen) == len(set(seen)) == PEOPLE * len(KEYS_EACH)
