"""The Import and export page (AppTest): admins only; a download per export format of the registry.
Uploading, previewing, importing and downloading in a real browser: tests/e2e/test_import_export.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator import exports
from annotator.db import get_engine
from tests.support.candidates import open_page


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return get_engine(f"sqlite:///{tmp_path / 'transfer.sqlite'}")


def test_admins_get_an_upload_the_limit_and_a_download_per_format(engine: Engine) -> None:
    app = open_page("import_export", engine, name="ada", role="admin")
    assert not app.exception, app.exception
    assert any("Up to 200 MB per file" in caption.value for caption in app.caption)
    downloads = [element.proto.label for element in app.get("download_button")]
    assert sorted(downloads) == sorted(exports.FORMATS)


@pytest.mark.parametrize("role", ["annotator", "reviewer"])
def test_others_may_not_open_it(engine: Engine, role: str) -> None:
    app = open_page("import_export", engine, name="someone", role=role)
    assert [e.value for e in app.error] == [
        f"Only admins may open this page; you are signed in as someone ({role})."
    ]
    assert not app.get("download_button")
