"""Sign-in through an identity provider in real headless Chromium: `streamlit run server.py` (the app with its
server-set session cookie) with an `[auth]` section
in its secrets.toml, against a real OpenID Connect provider on 127.0.0.1 (`oidc-provider-mock`, in its own
process). An account an admin added with `user add --oidc EMAIL --role ROLE` signs in with that role; an unknown
identity is told to ask an admin and gets no account; a disabled one is refused; signing out ends both sign-ins;
the password form stays."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Annotator
from tests.conftest import missing
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_candidates, add_user
from tests.support.cli import run_cli
from tests.support.ports import start_listening, stop, tail
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 60_000
PASSWORD = "correct horse"
PROVIDER = "Mock provider"
# The sidebar shows the name through `escape_markdown`, which puts a word joiner before "@" (no autolink).
ADA_REVIEWER = re.compile(r"^Signed in as ada\u2060?@example\.com \(reviewer\)$")


@dataclass
class OidcApp:
    app: RunningApp
    provider_url: str


def _start_provider(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m oidc_provider_mock` on 127.0.0.1; returns once its discovery document answers."""
    try:
        import oidc_provider_mock  # noqa: F401
    except ImportError:
        missing("oidc-provider-mock is not installed (requirements-test.txt)")

    def launch(port: int) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
        with log.open("wb") as out:
            return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    process, port = start_listening(launch, log, what="oidc_provider_mock", timeout=30)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{url}/.well-known/openid-configuration") or process.poll() is not None, 30,
                 "oidc_provider_mock to answer")
    except AssertionError:
        stop(process)
        raise
    if process.poll() is not None:
        raise RuntimeError(f"oidc_provider_mock exited: {tail(log)}")
    return process, url


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def oidc_app(tmp_path: Path) -> Iterator[OidcApp]:
    provider, provider_url = _start_provider(tmp_path / "provider.log")
    # The app's secrets.toml, outside the repository: Streamlit reads the files `secrets.files` lists
    # (STREAMLIT_SECRETS_FILES); `{port}` in redirect_uri becomes the port the server listens on.
    secrets_toml = tmp_path / "secrets.toml"
    secrets_toml.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "annotator-e2e"\n'
        'client_secret = "annotator-e2e-secret"\n'
        f'server_metadata_url = "{provider_url}/.well-known/openid-configuration"\n'
        f'display_name = "{PROVIDER}"\n'
    )
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_candidates(engine, 2)
    add_user(engine, "boss", role="admin", password=PASSWORD)
    # The admin gives Ada's address (in another case than the provider's) the reviewer role.
    added = run_cli(url, "user", "add", "--oidc", "ADA@example.com", "--role", "reviewer")
    assert added.returncode == 0, added.stderr
    running = start_app(url, tmp_path / "streamlit.log", script="server.py",
                        env={"STREAMLIT_SECRETS_FILES": str(secrets_toml)})
    yield OidcApp(running, provider_url)
    stop_app(running)
    provider.terminate()
    provider.wait(timeout=10)


def _page(browser):  # type: ignore[no-untyped-def]
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    return page


def _sign_in_at_provider(page, app: OidcApp, subject: str) -> None:  # type: ignore[no-untyped-def]
    """From the app's sign-in page through the provider's form (the mock's user `subject`, whose e-mail claim
    it makes the same) and back to the app."""
    page.goto(app.app.url)
    page.get_by_role("button", name=f"Sign in with {PROVIDER}").click()
    page.get_by_placeholder("sub").fill(subject)  # the provider's own page
    assert page.url.startswith(app.provider_url)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{app.app.url}/**")


def _settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached", timeout=TIMEOUT_MS)


def test_a_known_identity_signs_in_with_the_role_the_admin_set_and_signs_out_of_both(
    oidc_app: OidcApp, browser  # type: ignore[no-untyped-def]
) -> None:
    page = _page(browser)
    _sign_in_at_provider(page, oidc_app, "ada@example.com")
    page.get_by_text(ADA_REVIEWER).wait_for()
    assert page.get_by_role("link", name="Team").count() == 1  # a reviewer's page
    # Streamlit's identity cookie: set by the server, signed, out of the page's script's reach.
    cookies = {cookie["name"]: cookie for cookie in page.context.cookies()}
    assert cookies["_streamlit_user"]["httpOnly"] is True
    assert cookies["_streamlit_user"]["sameSite"] == "Lax"
    assert "_streamlit_user" not in page.evaluate("document.cookie")
    # A reload is a new browser session: signed in again from the provider's cookie, no form.
    page.reload()
    page.get_by_text(ADA_REVIEWER).wait_for()

    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="End session").click()  # the provider's end of session
    page.get_by_role("heading", name="Sign in").wait_for()
    _settled(page)
    assert "_streamlit_user" not in {cookie["name"] for cookie in page.context.cookies()}
    assert page.get_by_text("Signed in as").count() == 0
    page.reload()
    page.get_by_role("heading", name="Sign in").wait_for()
    _settled(page)
    assert page.get_by_text("Signed in as").count() == 0

    # The password form is still there for people without the provider.
    page.get_by_role("textbox", name="Name").fill("boss")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")
    page.get_by_text("Signed in as boss (admin)").wait_for()


def test_an_unknown_identity_is_told_to_ask_an_admin_and_a_disabled_one_is_refused(
    oidc_app: OidcApp, browser  # type: ignore[no-untyped-def]
) -> None:
    page = _page(browser)
    _sign_in_at_provider(page, oidc_app, "mallory@example.com")
    page.get_by_role("heading", name="Ask an admin").wait_for()
    _settled(page)
    assert page.get_by_text(re.compile(r"Ask an admin to add mallory\u2060?@example\.com\.$")).count() == 1
    assert page.get_by_text("Signed in as").count() == 0
    assert page.get_by_role("link", name="Annotate").count() == 0
    with read_session(get_engine(oidc_app.app.database_url)) as session:
        names = set(session.execute(select(Annotator.name)).scalars())
    assert names == {"boss", "ada@example.com"}  # no account was made
    # Sign out ends the provider's sign-in, so someone else can sign in from this browser.
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="End session").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    page.get_by_role("button", name=f"Sign in with {PROVIDER}").wait_for()
    assert "_streamlit_user" not in {cookie["name"] for cookie in page.context.cookies()}

    disabled = run_cli(oidc_app.app.database_url, "user", "disable", "ada@example.com")
    assert disabled.returncode == 0, disabled.stderr
    other = _page(browser)
    _sign_in_at_provider(other, oidc_app, "ada@example.com")
    other.get_by_role("heading", name="Account disabled").wait_for()
    _settled(other)
    assert other.get_by_text("Signed in as").count() == 0
