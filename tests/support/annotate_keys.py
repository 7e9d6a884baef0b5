"""Annotate in the browser: signing in as an annotator, pressing a key, waiting for a candidate."""

from __future__ import annotations

import re

PASSWORD = "correct horse"


def sign_in(page, url: str, name: str = "ann") -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")


BUTTON_KEYS = {"1": "decide_1", "2": "decide_2", "0": "decide_0", "s": "skip", "b": "back"}


def shows(page, data_id: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the candidate's heading (`data_id · source · type`) is visible and the app's run has ended."""
    page.get_by_role("heading", name=re.compile(rf"^{re.escape(data_id)} ·")).wait_for()
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def press(page, key: str) -> None:  # type: ignore[no-untyped-def]
    """Press a shortcut once its button is on the page: after a reload the buttons can still be mounting
    when the heading shows, and a shortcut whose button is not mounted yet does nothing."""
    page.locator(f".st-key-{BUTTON_KEYS[key]} button").wait_for()
    page.keyboard.press(key)
