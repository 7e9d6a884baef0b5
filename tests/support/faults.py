"""Faults under a queue page held in the browser (Annotate, Adjudicate, Review): an app server killed with
decisions waiting and started again, a network that stalls. Each helper makes the decisions with the test's own
`decide()` (its keys, then a check that the next item shows: the browser had them, nothing waited for the server),
checks the page holds them all waiting and the database none of them, brings the server or network back and waits
until the page has had every one answered. What was stored is for the test to check."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from tests.e2e.conftest import RunningApp, start_app
from tests.support.annotate_keys import all_saved
from tests.support.tcp_proxy import DelayProxy
from tests.support.waiting import wait_for
from ui.session_cookie import COOKIE

STALL_SECONDS = 10
RESTART_TIMEOUT_MS = 120_000  # a server started again on a shared machine, then the page's reconnection


def _held(page, decide: Callable[[], None], count: int) -> None:  # type: ignore[no-untyped-def]
    decide()
    assert page.locator(".aq-indicator").inner_text().startswith(f"{count} waiting")


def killed_and_started_again(app: RunningApp, page, decide: Callable[[], None], count: int,  # type: ignore[no-untyped-def]
                             stored: Callable[[], object]) -> None:
    """The app server hangs (SIGSTOP: what reaches it is never answered) while `decide()` makes `count` decisions,
    is killed (SIGKILL) with them waiting, and `app` is started again in place: same port, same database (`app`'s
    fixture stops the new process). The page, not reloaded, reconnects and sends them again. `stored()`: what the
    database holds of them, nothing while the server is down. No traceback, on the page or in either server's log."""
    all_saved(page)
    # The sign-in's cookie is in the browser (its script runs after the sign-in's page): a server started again
    # knows the page's person from it, as after any restart.
    wait_for(lambda: any(cookie["name"] == COOKIE for cookie in page.context.cookies()), 30, "the sign-in's cookie")
    os.kill(app.process.pid, signal.SIGSTOP)
    try:
        _held(page, decide, count)
    finally:
        app.process.kill()
        app.process.wait()
    assert not stored(), stored()
    again = start_app(app.database_url, app.log.with_name(f"{app.log.stem}-again.log"),
                      port=int(app.url.rsplit(":", 1)[1]))
    logs = [app.log, again.log]
    app.process, app.log = again.process, again.log
    all_saved(page, timeout=RESTART_TIMEOUT_MS)
    assert page.locator("[data-testid=stException]").count() == 0
    for log in logs:
        assert "Traceback" not in log.read_text(errors="replace"), log.read_text(errors="replace")[-3000:]


def stalled(proxy: DelayProxy, page, decide: Callable[[], None], count: int,  # type: ignore[no-untyped-def]
            stored: Callable[[], object]) -> None:
    """The network stalls (the proxy holds every byte, connections open) for `STALL_SECONDS` while `decide()` makes
    `count` decisions; nothing of them reaches the database (`stored()`) until it resumes."""
    all_saved(page)
    proxy.pause()
    try:
        _held(page, decide, count)
        assert not stored(), stored()
        stalled_until = time.monotonic() + STALL_SECONDS
        wait_for(lambda: time.monotonic() > stalled_until, STALL_SECONDS + 5, "the stall's end")
        assert not stored(), stored()
    finally:
        proxy.resume()
    all_saved(page)
