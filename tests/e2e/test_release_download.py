"""The release download honours the page's "include incomplete" checkbox, in real headless
Chromium against `streamlit run`: with labels_per_candidate = 2, a candidate with one label of human_check = 1
is left out of `reliablemath.zip` and its manifest says so; ticked, the zip holds it and names that rule."""

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
from tests.support.candidates import add_user, add_vetted_and_incomplete

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 60_000


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "ada", role="admin", password=PASSWORD)
    add_vetted_and_incomplete(engine)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _download(page) -> tuple[list[str], dict]:  # type: ignore[no-untyped-def]
    with page.expect_download() as download:
        page.get_by_role("button", name="reliablemath").click()
    with zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes())) as archive:
        unsol = [record["data_id"] for record in json.loads(archive.read("unsol.json"))]
        return unsol, json.loads(archive.read("manifest.json"))


def test_the_checkbox_puts_the_incomplete_candidates_in(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_context(accept_downloads=True).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    sign_in(page, f"{app.url}/import_export", "ada")
    page.get_by_text("and leaves out 1 incomplete one(s)").wait_for()
    unsol, manifest = _download(page)
    assert unsol == ["math_0_remove_1"]
    assert manifest["vetted"] == {"rule": "complete-or-adjudicated", "labels_per_candidate": 2,
                                  "imported_labels_count": True, "incomplete": 1, "left_out": 1}

    page.get_by_text("Release: include incomplete candidates").click()
    page.get_by_text("and 1 incomplete one(s).").wait_for()
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
    unsol, manifest = _download(page)
    assert unsol == ["math_0_remove_1", "math_1_remove_1"]
    assert manifest["vetted"]["rule"] == "include-incomplete" and manifest["vetted"]["left_out"] == 0
    assert manifest["options"] == {"include_incomplete": True}
