"""Hostile dataset text in the browser: fields whose script, image or link would fetch from a tracker if rendered as
HTML or Markdown, and the checks that nothing ran or fetched."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ui.markdown import JOINER


class Tracker:
    """An HTTP server on 127.0.0.1 that records the path of every request and answers 404.

    Streamlit's own probes (`/_stcore/...`) are not recorded: the tracker may get the port of an earlier test's app
    server, whose page, still open in the shared browser, keeps asking it whether it is back. The hostile texts
    name other paths."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        tracker = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if not self.path.startswith("/_stcore/"):
                    tracker.paths.append(self.path)
                self.send_response(404)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile(field: str, url: str) -> str:
    """Text that would fetch `url/...`, link to it, or style itself if it were rendered as anything but text."""
    return (
        f"{field} starts $x\n\n![m]({url}/{field}/math-image.png)$ then [link-{field}]({url}/{field}/link) "
        f"![img-{field}]({url}/{field}/image.png) <img src=\"{url}/{field}/html.png\"> :red[red-{field}] "
        f":material/home: :smile: **bold-{field}** $\\href{{{url}/{field}/href}}{{click}}$ "
        f"$\\includegraphics{{{url}/{field}/graphic.png}}$ {url}/{field}/bare www.example.com ends"
    )


# What each field must show literally (whitespace aside): a sample of its hostile parts.
def literals(field: str, url: str) -> list[str]:
    return [f"[link-{field}]({url}/{field}/link)", f":red[red-{field}]", f"**bold-{field}**",
            f"$\\href{{{url}/{field}/href}}{{click}}$", f"<img src=\"{url}/{field}/html.png\">",
            ":material/home: :smile:", f"{url}/{field}/bare www.example.com", f"$x ![m]({url}/{field}/math-image.png)$"]


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    running = Tracker()
    yield running
    running.close()


def settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def shown_text(page) -> str:  # type: ignore[no-untyped-def]
    """The page's text as a person reads it: the joiners (invisible) dropped, whitespace folded."""
    return " ".join(page.evaluate("document.body.innerText").replace(JOINER, "").split())


def assert_inert(page, tracker: Tracker, fields: list[str]) -> None:  # type: ignore[no-untyped-def]
    """No link or image to the tracker (or made from bare addresses) in the page; each field's text literal."""
    assert page.locator(f"a[href*='{tracker.url}'], a[href*='example.com'], a[href^='mailto']").count() == 0
    assert page.locator(f"img[src*='{tracker.url}'], [style*='{tracker.url}']").count() == 0
    # (Streamlit gives headings an anchor link to themselves, href="#...": not data.)
    found = page.locator("[data-testid=stMarkdownContainer] a:not([href^='#']), [data-testid=stMarkdownContainer] img")
    assert found.count() == 0, [found.nth(i).evaluate("e => e.outerHTML") for i in range(found.count())]
    # The queue component (`ui/components/queue`) makes no link, image or script of its own: any would be data's.
    assert page.locator(".aq-root a, .aq-root img, .aq-root script, .aq-root iframe").count() == 0
    assert page.locator(".aq-root strong, .aq-root code").filter(has_text="bold-").count() == 0
    assert page.locator(".stMarkdownColoredText, .stMarkdownBadge").filter(has_text="red-").count() == 0
    assert page.locator("[data-testid=stMarkdownContainer] strong").filter(has_text="bold-").count() == 0
    text = shown_text(page)
    for field in fields:
        for literal in literals(field, tracker.url):
            assert " ".join(literal.split()) in text, (field, literal)
