"""Browser-test fixtures: the app under `streamlit run` on a free port with its own database, and
headless Chromium driven by Playwright (design.md section 6)."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, missing
from tests.support.hostile_text import tracker  # noqa: F401  (the fixture, for the hostile-text tests)
from tests.support.ports import start_listening, stop, tail
from tests.support.waiting import wait_for

CHROMIUM = os.environ.get("ANNOTATOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
START_TIMEOUT_SECONDS = 60


@dataclass
class RunningApp:
    url: str
    database_url: str
    process: subprocess.Popen[bytes]
    log: Path


def start_app(database_url: str, log: Path, *, script: str = "app.py", env: dict[str, str] | None = None,
              port: int | None = None) -> RunningApp:
    """`streamlit run` in a child process on a port of its own (`port`: that one, e.g. a server started again
    where the browser knows it); returns once its health endpoint answers."""
    environment = {**os.environ, "ANNOTATOR_DATABASE_URL": database_url, **(env or {})}

    def launch(port: int) -> subprocess.Popen[bytes]:
        command = [
            sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.port", str(port),
            "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType",
            "none", "--server.runOnSave", "false",
        ]
        with log.open("wb") as handle:
            return subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment, stdout=handle, stderr=subprocess.STDOUT)

    if port is None:
        process, port = start_listening(launch, log, what="streamlit", timeout=START_TIMEOUT_SECONDS)
    else:
        process = launch(port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _healthy(url) or process.poll() is not None, START_TIMEOUT_SECONDS, f"streamlit at {url}")
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}: {tail(log)}")
    except BaseException:
        stop(process)
        raise
    return RunningApp(url=url, database_url=database_url, process=process, log=log)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def stop_app(app: RunningApp) -> None:
    stop(app.process)


# Package scope, not session: Playwright's sync API keeps an asyncio loop running in this thread while it
# is open, and every later test that calls asyncio.run() (the LLM pipeline's) would fail.
ADMIN_PASSWORD = "correct horse"


@pytest.fixture
def evaluate_app(tmp_path: Path) -> Iterator[RunningApp]:
    """The app over a fresh SQLite file holding the evaluation items and an admin `boss` (`ADMIN_PASSWORD`); its
    runs read their API key from `E2E_RUN_KEY`."""
    from annotator.database.engine import get_engine
    from tests.support.candidates import add_user
    from tests.support.evaluation_items import add_evaluation_items

    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "boss", role="admin", password=ADMIN_PASSWORD)
    add_evaluation_items(engine)
    running = start_app(url, tmp_path / "streamlit.log", env={"E2E_RUN_KEY": "sk-test"})
    yield running
    stop_app(running)


def fill_evaluate_form(page, base_url: str) -> None:  # type: ignore[no-untyped-def]
    """Evaluate's form for model `m-x` at `base_url`, its key in `E2E_RUN_KEY` (`evaluate_app`): filled once the
    page's run is over (a field filled while the run still draws the form can lose its text), the last field left
    so that its text is in the form before Start run is pressed."""
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
    page.get_by_role("textbox", name="Model").fill("m-x")
    page.get_by_role("textbox", name="Base URL (empty = OpenAI)").fill(base_url)
    page.get_by_role("textbox", name="API key variable").fill("E2E_RUN_KEY")
    page.get_by_role("textbox", name="API key variable").press("Tab")


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        missing(f"Chromium is not at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed")
    from playwright.sync_api import expect

    # An assertion waits as long as a locator does (Playwright's 30 s): a figure computed on a loaded 2-core machine
    # can take more than expect's own 5 s to show.
    expect.set_options(timeout=30_000)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


def open_page(page, url: str, *, name: str, password: str, link: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in on the start page (Annotate), then open `link` through the navigation once Annotate shows.

    (A fresh session's first run of a page's own address is Streamlit's, without app.py's sign-in form, hence the
    start page.)
    """
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("textbox", name="Password").press("Enter")
    page.wait_for_function(
        "() => { const headings = [...document.querySelectorAll('h4')].map((h) => h.innerText);"
        " return headings.length > 0 && !headings.some((t) => t.startsWith('Loading')); }"
    )
    page.get_by_role("link", name=link).click()
    # Annotate's headings look like other pages' ("data_id · source · type"): wait until it is gone.
    page.locator(".aq-root[data-store$=':annotate']").wait_for(state="detached")


# Model and dataset text that would run script, load an image, make a link or emphasis if rendered as HTML or
# Markdown; pages must show it as text.
XSS_PAYLOAD = (
    '<script>window.__xss = 1</script> <img src="x" onerror="window.__xss = 2"> **bold** '
    "[link](javascript:alert(3))"
)


def watch_dialogs(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The messages of every dialog (alert, confirm) the page opens from now on; each is dismissed."""
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return dialogs


def assert_payload_inert(page, dialogs: list[str]) -> None:  # type: ignore[no-untyped-def]
    """`XSS_PAYLOAD` on the page did nothing: no script ran, no payload image or javascript link exists.

    Positive control: an image with a broken source that *we* add fires its onerror; once it has, a payload
    image rendered at the same time would have fired too.
    """
    page.evaluate(
        "() => { const img = document.createElement('img'); img.onerror = () => { window.__control = 1 };"
        " img.src = 'x-control'; document.body.appendChild(img); }"
    )
    page.wait_for_function("window.__control === 1")
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert dialogs == []
