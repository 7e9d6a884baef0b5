"""Data in and out from the browser, in real headless Chromium against `streamlit run`:
the ReliableMath release uploaded through the file input, previewed and imported, with the same `stats --json`
as the command line's import; its `.zip` download byte for byte equal to `export --format reliablemath`; a bad
file's one-line error with nothing stored; the Overview's charts drawn; an admin page's address opened signed
out reaching that page after signing in (or a clear refusal for a role that may not see it).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.database.engine import get_engine
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.annotate_keys import PASSWORD, sign_in
from tests.support.candidates import add_user
from tests.support.cli import run_cli
from tests.support.extras import without_module
from tests.support.progress import EXPECTED_STATES, add_progress

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 120_000  # a release import on a shared 2-core machine


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "ada", role="admin", password=PASSWORD)
    add_user(engine, "amy", role="annotator", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def sign_in_at(page, address: str, name: str = "ada") -> None:  # type: ignore[no-untyped-def]
    """Open `address` (a page's) signed out and sign in there."""
    sign_in(page, address, name)


def settled(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app's script run has ended."""
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached", timeout=TIMEOUT_MS)


def release_zip(release: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as archive:
        for path in sorted(release.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(release).as_posix())
    return out


def stats_json(url: str) -> dict:
    result = run_cli(url, "stats", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_upload_preview_import_and_download_the_release(
    app: RunningApp, browser, shared_data: Path, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    release = shared_data / "reliablemath"
    page = browser.new_context(accept_downloads=True).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    sign_in_at(page, f"{app.url}/import_export")
    page.get_by_role("heading", name="Import and export").wait_for()
    page.get_by_text("Up to 200 MB per file").wait_for()
    page.locator("input[type=file]").set_input_files(str(release_zip(release, tmp_path / "release.zip")))
    # The preview: one row per file (the ten of records and math_instruction.json), the records counted once,
    # the first records of each, and the button; nothing stored yet.
    page.get_by_role("button", name="Import 11 file(s)").wait_for()
    page.get_by_text("In all: 313 problems, 1102 candidates and 1102 labels, each counted once").wait_for()
    page.get_by_text("First records of release/unsol.json").wait_for()
    assert stats_json(app.database_url)["total"]["candidates"] == 0
    page.get_by_role("button", name="Import 11 file(s)").click()
    page.get_by_text("imported 11 file(s): 313 problems and 1102 candidates added").wait_for()
    cli_url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    assert run_cli(cli_url, "import", str(release)).returncode == 0
    assert stats_json(app.database_url) == stats_json(cli_url)

    with page.expect_download() as download:
        page.get_by_role("button", name="reliablemath").click()
    zipped = Path(download.value.path()).read_bytes()
    assert download.value.suggested_filename == "reliablemath.zip"
    exported = run_cli(app.database_url, "export", "--format", "reliablemath", "--out", str(tmp_path / "cli"))
    assert exported.returncode == 0, exported.stderr
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        cli_files = sorted(p.relative_to(tmp_path / "cli").as_posix() for p in (tmp_path / "cli").rglob("*.json"))
        assert sorted(archive.namelist()) == cli_files
        for name in cli_files:
            if name != "manifest.json":  # its export time differs
                assert archive.read(name) == (tmp_path / "cli" / name).read_bytes(), name
                assert archive.read(name) == (release / name).read_bytes(), name


def test_a_bad_file_shows_its_one_line_error_and_changes_nothing(
    app: RunningApp, browser, shared_data: Path, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    release = shared_data / "reliablemath"
    unsol = json.loads((release / "unsol.json").read_text(encoding="utf-8"))
    unsol[2]["difficulty_eval"] = "hard"
    (tmp_path / "upload").mkdir()
    bad = tmp_path / "upload" / "unsol.json"
    bad.write_text(json.dumps(unsol, indent=4), encoding="utf-8")
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    sign_in_at(page, f"{app.url}/import_export")
    page.locator("input[type=file]").set_input_files([str(release / "solve.json"), str(bad)])
    page.get_by_text(
        "unsol.json: record 3: field 'difficulty_eval': expected 0 (simple) or 1 (hard), got 'hard'", exact=True
    ).wait_for()
    assert page.get_by_role("button", name="Import 2 file(s)").count() == 0
    assert page.get_by_text("Traceback").count() == 0
    assert stats_json(app.database_url)["problems"] == 0


def test_the_overview_draws_its_charts(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    add_progress(get_engine(app.database_url))
    page = browser.new_context().new_page()
    sign_in_at(page, f"{app.url}/overview")
    page.get_by_role("heading", name="Progress").wait_for()
    # One bar segment (an SVG mark) per data source, rewrite type and state that has candidates; one bar per day.
    charts = page.locator("[data-testid=stVegaLiteChart]")
    bars = charts.filter(has_text="Candidates by state").locator("g.mark-rect path")
    bars.nth(len(EXPECTED_STATES) - 1).wait_for()
    assert bars.count() == len(EXPECTED_STATES)
    days = charts.filter(has_text="Labels per day").locator("g.mark-rect path")
    days.first.wait_for()
    assert days.count() == 1
    assert page.get_by_text("None", exact=True).count() == 0


def test_an_admin_address_opened_signed_out_opens_after_signing_in(
    app: RunningApp, browser  # type: ignore[no-untyped-def]
) -> None:
    page = browser.new_context().new_page()
    page.goto(f"{app.url}/import_export")
    page.get_by_role("heading", name="Sign in").wait_for()
    settled(page)
    assert page.get_by_text("Page not found").count() == 0
    sign_in_at(page, f"{app.url}/import_export")
    page.get_by_role("heading", name="Import and export").wait_for()
    settled(page)
    assert page.url.endswith("/import_export")
    assert page.get_by_text("Page not found").count() == 0


def test_a_role_that_may_not_see_the_page_gets_a_clear_message(
    app: RunningApp, browser  # type: ignore[no-untyped-def]
) -> None:
    page = browser.new_context().new_page()
    sign_in_at(page, f"{app.url}/import_export", name="amy")
    page.get_by_text("Only admins may open this page; you are signed in as amy (annotator).").wait_for()
    settled(page)
    assert page.get_by_text("Page not found").count() == 0
    assert page.get_by_role("button", name="reliablemath").count() == 0


def test_without_the_inspect_extra_the_page_names_it_for_reading_and_writing(
    browser, shared_data: Path, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    """An app server without inspect-ai: the inspect download is not offered, saying which extra it needs, and an
    uploaded Inspect log gets the one-line error naming it; the other exports stay offered."""
    from tests.support.inspect_logs import inspect_log

    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    add_user(get_engine(url), "ada", role="admin", password=PASSWORD)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"data_id": "aime_0", "model": "m", "prompt": "p", "response": "\\boxed{204}"})
                       + "\n", encoding="utf-8")
    assert run_cli(url, "import", str(shared_data / "reliablemath" / "solve" / "aime.json"), str(answers)
                   ).returncode == 0
    log = inspect_log(tmp_path / "run.eval")
    running = start_app(url, tmp_path / "streamlit.log", env=without_module("inspect_ai", tmp_path / "no-inspect"))
    try:
        page = browser.new_context().new_page()
        page.set_default_timeout(TIMEOUT_MS)
        sign_in_at(page, f"{running.url}/import_export")
        needs = 'Inspect AI logs needs the "inspect" extra: pip install -e ".[inspect]"'
        page.get_by_text(f"Writing {needs}.", exact=True).wait_for()
        settled(page)
        assert page.get_by_role("button", name="inspect", exact=True).is_disabled()
        assert page.get_by_role("button", name="transcripts", exact=True).is_enabled()
        page.locator("input[type=file]").set_input_files(str(log))
        page.get_by_text(f"reading {needs}", exact=True).wait_for()
        settled(page)
        assert page.get_by_role("button", name="Import 1 file(s)").count() == 0
        assert page.get_by_text("Traceback").count() == 0
    finally:
        stop_app(running)
