"""The Hugging Face download on the Import and export page, in real headless Chromium against `streamlit run`: the
`hf.zip` it gives is the folder `export --format hf` writes, and `datasets.load_dataset` loads it with the rows of the
page's own `reliablemath.zip`."""

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
from tests.support.hf_dataset import front_matter, load_with_datasets, write_release
from tests.support.release import import_release

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 60_000


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "ada", role="admin", password=PASSWORD)
    import_release(engine, write_release(tmp_path / "release"))
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _download(page, name: str, folder: Path) -> Path:  # type: ignore[no-untyped-def]
    with page.expect_download() as download:
        page.get_by_role("button", name=name, exact=True).click()
    assert download.value.suggested_filename == f"{name}.zip"
    with zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes())) as archive:
        archive.extractall(folder)
    return folder


def test_the_hf_download_loads_with_datasets(app: RunningApp, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_context(accept_downloads=True).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    sign_in(page, f"{app.url}/import_export", "ada")
    page.get_by_text("The reliablemath release holds 4 vetted candidate(s)").wait_for()
    hf = _download(page, "hf", tmp_path / "hf")
    release = _download(page, "reliablemath", tmp_path / "release_zip")
    configs = [config["config_name"] for config in front_matter((hf / "README.md").read_text("utf-8"))["configs"]]
    assert json.loads((hf / "manifest.json").read_text("utf-8"))["vetted"]["left_out"] == 0
    loaded = load_with_datasets(hf, configs, tmp_path / "hf_cache")
    for source in ("aime", "amc", "minerva"):
        released = json.loads((release / "unsol" / f"{source}.json").read_text("utf-8"))
        assert loaded[f"unsol_{source}"]["rows"] == released
