"""The Import and export page (AppTest): admins only; a download per export format of the registry.
Uploading, previewing, importing and downloading in a real browser: tests/e2e/test_import_export.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator import exports, labels, queue
from annotator.db import get_engine, write_session
from tests.support.candidates import add_candidates, add_user, open_page


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


def test_the_release_checkbox_says_what_the_download_holds(engine: Engine) -> None:
    # labels_per_candidate = 2: one candidate with two labels of human_check = 1, one with a single such label.
    ids = add_candidates(engine, 2, rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for candidate_id, who in ((ids[0], ann), (ids[0], bea), (ids[1], ann)):
            labels.record_label(session, candidate_id=candidate_id, annotator_id=who.id, human_check=1,
                                difficulty_eval=0)
    app = open_page("import_export", engine, name="ada", role="admin")
    assert not app.exception, app.exception
    box = app.checkbox(key="export_include_incomplete")
    assert box.value is False and "--include-incomplete" in box.label
    said = [caption.value for caption in app.caption if "reliablemath release" in caption.value]
    assert said == ["The reliablemath release holds 1 vetted candidate(s) (2 label(s) resolving to human_check = 1, "
                    "or adjudicated so) and leaves out 1 incomplete one(s)."]
    box.check().run()
    assert not app.exception, app.exception
    said = [caption.value for caption in app.caption if "reliablemath release" in caption.value]
    assert said[0].endswith("and 1 incomplete one(s).")
    # The other downloads are still there, one per format.
    assert sorted(element.proto.label for element in app.get("download_button")) == sorted(exports.FORMATS)
