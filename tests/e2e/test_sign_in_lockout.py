"""A stranger's failed sign-ins do not keep the owner out, and an admin unlocks the account on the Team page.

Each browser context is a client of its own: the server trusts `X-Forwarded-For` from 127.0.0.1 (uvicorn's
`FORWARDED_ALLOW_IPS` default, which `docs/deploy.md` has a proxy rely on), so the address a context sends there is
the address `st.context.ip_address` gives the sign-in throttle.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.accounts import auth, throttle
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import SignInFailure, utcnow
from tests.e2e.conftest import ADMIN_PASSWORD, RunningApp, open_page, start_app, stop_app
from tests.support.candidates import add_candidates, add_user
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 60_000
PASSWORD = "ann's own long password"
OWNER_ADDRESS = "198.51.100.7"
STRANGER_ADDRESS = "203.0.113.9"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_candidates(engine, 2)
    add_user(engine, "boss", role="admin", password=ADMIN_PASSWORD)
    add_user(engine, "ann", password=PASSWORD)
    # Ann signed in from her usual address before: it is known to her account.
    assert auth.sign_in(engine, name="ann", password=PASSWORD, client=OWNER_ADDRESS) is not None
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _client(browser, address: str | None):  # type: ignore[no-untyped-def]
    """A page in a browser context of its own, coming from `address` (None: this machine, no header)."""
    context = browser.new_context(extra_http_headers={"X-Forwarded-For": address} if address else {})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    return page


def _press_sign_in(page, name: str, password: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def _told_to_wait(page) -> bool:  # type: ignore[no-untyped-def]
    return page.get_by_text("Too many failed sign-ins; try again in").count() > 0


def _failures(engine, key: str) -> int:  # type: ignore[no-untyped-def]
    with read_session(engine) as session:
        row = session.get(SignInFailure, key)
        return 0 if row is None else row.failures


def test_the_owner_signs_in_past_a_strangers_failures_and_an_admin_unlocks(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    engine = get_engine(app.database_url)
    stranger_on_ann = f"pair:ann:{STRANGER_ADDRESS}"
    stranger = _client(browser, STRANGER_ADDRESS)
    stranger.goto(app.url)
    # Wrong guesses until the page makes the stranger wait: after FREE_FAILURES, or a few more where the machine
    # is so slow that a wait ends before the next press.
    for guess in range(1, throttle.FREE_FAILURES + 5):
        _press_sign_in(stranger, "ann", f"guess number {guess}")
        wait_for(lambda made=guess: _failures(engine, stranger_on_ann) == made or _told_to_wait(stranger), 30,
                 f"guess {guess} counted or refused")
        if _told_to_wait(stranger):
            break
        stranger.get_by_text("Unknown name or wrong password.").wait_for()
    assert _told_to_wait(stranger)
    made = _failures(engine, stranger_on_ann)
    assert made == guess - 1 >= throttle.FREE_FAILURES  # the refused guess was not checked, nor counted
    # Strangers elsewhere take the account past its own free failures: every address ann never used now waits.
    with write_session(engine) as session:
        for i in range(throttle.ACCOUNT_FREE_FAILURES):
            throttle.record_failure(session, attempt_keys=throttle.keys(name="ann", client=f"192.0.2.{i + 1}"))
    with read_session(engine) as session, pytest.raises(throttle.Throttled):
        throttle.check(session, name="ann", client="192.0.2.200", now=utcnow())

    # Ann, from her usual address, signs in at once.
    owner = _client(browser, OWNER_ADDRESS)
    owner.goto(app.url)
    _press_sign_in(owner, "ann", PASSWORD)
    owner.get_by_text("Signed in as ann (annotator)").wait_for()

    # The stranger's failures still hold the account from the stranger's address: the Team page lists it, and
    # Unlock, pressed with the keyboard, forgets them.
    admin = _client(browser, None)
    open_page(admin, app.url, name="boss", password=ADMIN_PASSWORD, link="Team")
    admin.get_by_role("heading", name="Locked sign-ins").wait_for()
    unlock = admin.get_by_role("button", name="Unlock ann")
    unlock.focus()
    admin.keyboard.press("Enter")
    admin.get_by_text("Unlocked ann: its failed sign-ins are forgotten.").wait_for()
    admin.get_by_role("button", name="Unlock ann").wait_for(state="detached")
    assert _failures(engine, stranger_on_ann) == 0
    with read_session(engine) as session:
        assert throttle.locked_accounts(session) == {}

    # The stranger's next guess is checked again (and fails): nothing holds the account now.
    _press_sign_in(stranger, "ann", "after the unlock")
    wait_for(lambda: _failures(engine, stranger_on_ann) == 1, 30, "the guess after the unlock counted")
