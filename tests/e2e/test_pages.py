"""Addresses and tables in real headless Chromium against `streamlit run`: every address opens its page (the start
page's too, and the root, with a trailing slash or a query string), signed out the sign-in, never an error;
an address no page has says "No such page" (not Annotate), in the look of every page that cannot be shown;
Browse's first columns are the data id, the label state, my label and the number of labels, the generation
status last."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from annotator.database.engine import get_engine, write_session
from annotator.labelling import labels
from tests.e2e.conftest import RunningApp, open_page, start_app, stop_app
from tests.support.annotate_keys import PASSWORD, sign_in
from tests.support.candidates import add_candidates, add_user
from tests.support.waiting import wait_for
from ui.pages import PAGES
from ui.sign_in import COOKIE

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 60_000


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    ids = add_candidates(engine, 12)
    ann = add_user(engine, "ann", password=PASSWORD)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=ids[1], annotator_id=ann.id, human_check=1, difficulty_eval=1)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached", timeout=TIMEOUT_MS)


# What shows that a page is open: its title, or, on a page without one, one of its buttons.
SHOWN_BY = {
    "annotate": ".aq-root", "browse": "Browse", "overview": "Overview", "team": "Team",
    "adjudicate": ".aq-root[data-store$=':adjudicate']", "review": ".aq-review", "report": "Report",
    "generate": "Generate candidates", "evaluate": "Evaluate a model", "import_export": "Import and export",
}
ERROR = '[data-testid="stException"]'
APP_ERROR = "This app has encountered an error"


def _shown(page, what: str):  # type: ignore[no-untyped-def]
    if what.startswith("."):
        return page.locator(what)
    return page.get_by_role("heading", name=what, exact=True)


def _where(url: str) -> str:
    """The path (no trailing slash) and query string of `url`."""
    parts = urlsplit(url)
    return parts.path.rstrip("/") + (f"?{parts.query}" if parts.query else "")


def _opens(page, url: str, shown: str) -> None:  # type: ignore[no-untyped-def]
    """Open `url`; its page shows `shown` (`SHOWN_BY`'s way), and no error (a Streamlit error box or its "Page not
    found" dialog) shows once the run has ended."""
    page.goto(url)
    try:
        _shown(page, shown).or_(page.locator(ERROR)).or_(page.get_by_text(APP_ERROR)).first.wait_for()
    except Exception as exc:  # noqa: BLE001 - say which address showed what instead
        raise AssertionError(f"{url} -> {page.url} did not show {shown!r}; it shows: "
                             f"{page.locator('[data-testid=stMain]').inner_text(timeout=5_000)[:500]!r}") from exc
    _settled(page)
    errors = page.locator(ERROR).all_inner_texts()
    assert errors == [] and page.get_by_text(APP_ERROR).count() == 0, (url, errors)
    assert page.get_by_text("Page not found").count() == 0, url
    assert _shown(page, shown).count() == 1, (url, shown)


def test_every_address_opens_its_page_signed_out_and_in(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    assert set(SHOWN_BY) == {row.url_path for row in PAGES}
    add_user(get_engine(app.database_url), "boss", role="admin", password=PASSWORD)
    start = next(row.url_path for row in PAGES if row.default)
    # address -> the page that opens (its url_path; None: none has that address)
    addresses: dict[str, str | None] = {f"/{row.url_path}": row.url_path for row in PAGES}
    addresses |= {"/": start, "/?x=1": start, f"/{start}/": start, f"/{start}?x=1": start, "/browse/": "browse",
                  "/team?x=1&y=2": "team", "/nosuchpage": None, "/nosuchpage/": None, "/nosuchpage?x=1": None}
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    for address in addresses:
        _opens(page, app.url + address, "Sign in")
        assert _where(page.url) == _where(address)

    sign_in(page, app.url, name="boss")
    page.get_by_text("Signed in as boss (admin)").wait_for()
    # The page's script sets the sign-in cookie; the addresses below open signed in only once it is there.
    wait_for(lambda: COOKIE in {cookie["name"] for cookie in page.context.cookies()}, TIMEOUT_MS / 1000,
             "the sign-in cookie")
    for address, opened in addresses.items():
        _opens(page, app.url + address, SHOWN_BY.get(opened or "", "No such page"))
        # The root opens the start page at that page's own address (the query string kept).
        assert _where(page.url) == _where(f"/{opened or 'nosuchpage'}?{urlsplit(address).query}"), address
        if opened is None:
            assert page.get_by_text("There is no page at /nosuchpage.", exact=True).count() == 1


def test_an_unknown_address_says_no_such_page(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    # (A fresh server's very first visit: `test_a_fresh_servers_first_visit_*` below. Here the server has had one.)
    page.goto(app.url)
    page.get_by_role("heading", name="Sign in").wait_for()
    # Signed out, by the unknown address: signing in keeps the address.
    sign_in(page, f"{app.url}/nosuchpage")
    page.get_by_role("heading", name="No such page").wait_for()
    _settled(page)
    assert page.get_by_text("There is no page at /nosuchpage.", exact=True).count() == 1
    assert page.get_by_text("Choose a page in the sidebar.", exact=True).count() == 1
    assert page.locator(".aq-root").count() == 0  # not Annotate
    assert page.get_by_text("Page not found").count() == 0
    assert page.url.endswith("/nosuchpage")
    # The way on: the navigation is there; the unknown page is not listed in it.
    page.get_by_role("link", name="Browse").click()
    page.get_by_role("heading", name="Browse").wait_for()
    assert page.get_by_role("link", name="No such page").count() == 0

    # A page kept from this role: the same look (a heading, why, the way on).
    again = browser.new_context().new_page()
    again.set_default_timeout(TIMEOUT_MS)
    sign_in(again, f"{app.url}/team")
    again.get_by_role("heading", name="Not open to you").wait_for()
    _settled(again)
    assert again.get_by_text("Only reviewers and admins may open this page; you are signed in as ann "
                             "(annotator).", exact=True).count() == 1
    assert again.get_by_text("Choose a page in the sidebar.", exact=True).count() == 1


def test_a_fresh_servers_first_visit_by_an_unknown_address_signs_in_then_says_no_such_page(
    app: RunningApp, browser  # type: ignore[no-untyped-def]
) -> None:
    """The server's very first visit goes through app.py like every other (the pages live in `app_pages/`, not in
    the `pages/` folder that would put Streamlit in its legacy mode until app.py first ran): no "Page not found"."""
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    sign_in(page, f"{app.url}/nosuchpage")
    page.get_by_role("heading", name="No such page").wait_for()
    _settled(page)
    assert page.get_by_text("There is no page at /nosuchpage.", exact=True).count() == 1
    assert page.get_by_text("Page not found").count() == 0
    assert page.url.endswith("/nosuchpage")


def test_a_fresh_servers_first_visit_by_a_pages_address_signs_in_then_opens_it(
    app: RunningApp, browser  # type: ignore[no-untyped-def]
) -> None:
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    sign_in(page, f"{app.url}/team", name="rev")  # the sign-in form first: app.py ran, not team.py alone
    page.get_by_role("heading", name="Team").wait_for()
    _settled(page)
    assert page.get_by_role("link", name="Adjudicate").count() == 1  # app.py's navigation, for a reviewer
    assert page.get_by_text("Not open to you").count() == 0 and page.url.endswith("/team")


def test_browse_shows_data_id_state_my_label_and_labels_first(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    # Wide enough for every column: the grid draws only the columns in view.
    page = browser.new_context(viewport={"width": 2400, "height": 900}).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    open_page(page, app.url, name="rev", password=PASSWORD, link="Browse")
    page.get_by_role("heading", name="Browse").wait_for()
    _settled(page)
    grid = page.locator("[data-testid=stDataFrame]")
    grid.wait_for()
    headers = grid.locator("[role=columnheader]")
    headers.first.wait_for(state="attached")
    names = [text.strip() for text in headers.all_inner_texts() if text.strip()]
    assert names[:4] == ["data_id", "state", "my label", "labels"], names
    assert names[-1] == "status", names
    cells = grid.locator("[role=gridcell]").all_inner_texts()
    assert "complete" in cells and "unlabelled" in cells, cells
