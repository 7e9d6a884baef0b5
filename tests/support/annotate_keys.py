"""Annotate in the browser: signing in as an annotator, pressing a key, waiting for a candidate."""

from __future__ import annotations

PASSWORD = "correct horse"


def sign_in(page, url: str, name: str = "ann") -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")


HEADING = ".aq-heading"


def on_screen(page, data_id: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the item's heading (`data_id · source · type`) is on screen: the browser's doing alone (a run of
    the app that never ends, the server hung, does not stop it)."""
    page.wait_for_function("(start) => document.querySelector('.aq-heading')?.innerText.startsWith(start)",
                           arg=f"{data_id} ·")


def shows(page, data_id: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the item's heading is on screen and the app's run has ended."""
    on_screen(page, data_id)
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def heading(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator(HEADING).inner_text()


def press(page, key: str) -> None:  # type: ignore[no-untyped-def]
    """Press a key of the queue once it is on the page (its keys are the browser's: nothing else to wait for)."""
    page.locator(".aq-root").wait_for()
    page.keyboard.press(key)


def all_saved(page, timeout: float = 60_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the server has answered every decision the page sent (the indicator says "saved")."""
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'", timeout=timeout)


def ready(page, count: int) -> None:  # type: ignore[no-untyped-def]
    """Wait until the browser holds `count` candidates ready (the one on screen too): a person reads the first one
    while the page claims the next ones."""
    page.wait_for_function("(n) => Number(document.querySelector('.aq-root')?.dataset.ready || 0) >= n", arg=count)
