"""Signing in to the app in the browser (as `rev`, typing as a person does) and going to a page through its link."""

from __future__ import annotations

PASSWORD = "correct horse"


def sign_in(page, url: str) -> None:  # type: ignore[no-untyped-def]
    """Type the name, Tab, the password, Enter; then wait until the start page (Annotate) has settled."""
    page.goto(url)
    page.get_by_role("textbox", name="Name").focus()
    page.keyboard.type("rev")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => { const headings = [...document.querySelectorAll('h4')].map((h) => h.innerText);"
        " return headings.length > 0 && !headings.some((t) => t.startsWith('Loading'))"
        " && !document.querySelector('.st-key-annotate_ready_button'); }"
    )


def go(page, link: str) -> None:  # type: ignore[no-untyped-def]
    """Follow a navigation link with Enter (the link focused, no click), and wait for the page's title."""
    page.get_by_role("link", name=link).press("Enter")
    page.get_by_role("heading", name=link, exact=True).wait_for()
