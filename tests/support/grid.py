"""Streamlit's data grid in Chromium: a row chosen by its selection box, once the grid can take the click."""

from __future__ import annotations


def choose_first_row(page, scope: str = "") -> None:  # type: ignore[no-untyped-def]
    """Click the first row's selection box of the grid under `scope` (a CSS selector, or the page's only grid),
    after the page's run is over and the grid has drawn its rows: a click on a grid still being drawn, or replaced
    by the run, is lost."""
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
    grid = page.locator(f"{scope} [data-testid=stDataFrame]".strip())
    grid.locator("[role=gridcell]").first.wait_for(state="attached")
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)
