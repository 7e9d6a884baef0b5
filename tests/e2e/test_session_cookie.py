"""The password sign-in's cookie, set by the server when the app runs through `server.py` (`st.App`): HttpOnly
(no script in the page can read it), SameSite=Strict, Path=/, for the sign-in's lifetime; a reload signs in from
it; signing out deletes it; the page only ever holds a one-time code, useless a second time."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.database.engine import get_engine
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_candidates, add_user

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 60_000
PASSWORD = "correct horse"
COOKIE = "annotator_session"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_candidates(engine, 2)
    add_user(engine, "ann", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log", script="server.py", env={"ANNOTATOR_SESSION_HOURS": "12"})
    yield running
    stop_app(running)


def _settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached", timeout=TIMEOUT_MS)


def test_the_server_sets_the_sign_in_cookie_httponly(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app.url)
    page.get_by_role("textbox", name="Name").fill("ann")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    with page.expect_response(lambda response: response.url.endswith("/_annotator/session")) as answered:
        page.get_by_role("textbox", name="Password").press("Enter")
    assert answered.value.status == 204
    page.get_by_text("Signed in as ann (annotator)").wait_for()
    signed_in_at = time.time()

    cookie = next(cookie for cookie in page.context.cookies() if cookie["name"] == COOKIE)
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    assert re.fullmatch(r"[0-9a-f]{64}", cookie["value"])
    assert abs(cookie["expires"] - (signed_in_at + 12 * 3600)) < 120
    assert COOKIE not in page.evaluate("document.cookie")  # out of any page script's reach
    # What the page held was a one-time code, already spent; a made-up one gets nothing either.
    code = re.search(r'body: "([A-Za-z0-9_-]+)"', page.content())
    assert code is not None
    assert page.request.post(f"{app.url}/_annotator/session", data=code.group(1)).status == 403
    assert page.request.post(f"{app.url}/_annotator/session", data="made-up").status == 403

    page.reload()  # a new browser session: signed in from the cookie
    page.get_by_text("Signed in as ann (annotator)").wait_for()

    with page.expect_response(lambda response: response.url.endswith("/_annotator/sign-out")) as answered:
        page.get_by_role("button", name="Sign out").click()
    assert answered.value.status == 204
    page.get_by_role("heading", name="Sign in").wait_for()
    assert COOKIE not in {cookie["name"] for cookie in page.context.cookies()}
    page.reload()
    page.get_by_role("heading", name="Sign in").wait_for()
    _settled(page)
    assert page.get_by_text("Signed in as").count() == 0
