"""The Import and export page (AppTest): admins only; a download per export format of the registry.
Uploading, previewing, importing and downloading in a real browser: tests/e2e/test_import_export.py."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from streamlit.testing.v1 import AppTest

from annotator.accounts import auth
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Problem
from annotator.figures import stats
from annotator.figures.pages import OVERVIEW
from annotator.figures.snapshots import stored
from annotator.import_export import exports
from annotator.labelling import labels
from tests.support.candidates import add_candidates, add_vetted_and_incomplete
from tests.support.pages import open_page
from ui.markdown import escape_markdown


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def test_admins_get_an_upload_the_limit_and_a_download_per_format(engine: Engine) -> None:
    app = open_page("import_export", engine, name="ada", role="admin")
    assert not app.exception, app.exception
    assert any("Up to 200 MB per file" in caption.value for caption in app.caption)
    downloads = [element.proto.label for element in app.get("download_button")]
    assert sorted(downloads) == sorted(spec.name for spec in exports.EXPORTS)


@pytest.mark.parametrize("role", ["annotator", "reviewer"])
def test_others_may_not_open_it(engine: Engine, role: str) -> None:
    app = open_page("import_export", engine, name="someone", role=role)
    assert [e.value for e in app.error] == [
        f"Only admins may open this page; you are signed in as someone ({role})."
    ]
    assert not app.get("download_button")


def test_the_release_checkbox_says_what_the_download_holds(engine: Engine) -> None:
    # labels_per_candidate = 2: one candidate with two labels of human_check = 1, one with a single such label.
    add_vetted_and_incomplete(engine)
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
    labels = sorted(element.proto.label for element in app.get("download_button"))
    assert labels == sorted(spec.name for spec in exports.EXPORTS)


def _zip(name: str, data: bytes, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


def _damaged() -> bytes:
    data = bytearray(_zip("a.json", b'[{"question": "q"}]', zipfile.ZIP_STORED))
    data[data.index(b'"q"')] = ord("X")
    return bytes(data)


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (("bomb.zip", _zip("bomb.json", bytes(50_000_000))), "bomb.zip: member 'bomb.json' unpacks "),
        (("damaged.zip", _damaged()), "damaged.zip: member 'a.json' cannot be unpacked: Bad CRC-32 for file 'a.json'"),
        (("evil.zip", _zip("../../etc/x.json", b"[]")),
         "evil.zip: member '../../etc/x.json' points outside the archive"),
    ],
)
def test_a_hostile_upload_shows_one_line_and_stores_nothing(
    engine: Engine, upload: tuple[str, bytes], message: str
) -> None:
    app = open_page("import_export", engine, name="ada", role="admin")
    app.get("file_uploader")[0].set_value([(*upload, "application/zip")])
    app.run()
    assert not app.exception, app.exception
    errors = [element.value for element in app.error]
    assert len(errors) == 1 and errors[0].startswith(escape_markdown(message)) and "\n" not in errors[0], errors
    assert not [button for button in app.button if button.key == "import_run"]
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0


def test_the_server_shows_no_traceback_on_any_page() -> None:
    import tomllib

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] in ("type", "none")


def test_several_bad_files_show_every_error(engine: Engine, shared_data: Path) -> None:
    unsol = json.loads((shared_data / "reliablemath" / "unsol" / "aime.json").read_text(encoding="utf-8"))
    unsol[1]["difficulty_eval"] = "hard"
    uploads = [
        ("unsol.json", json.dumps(unsol).encode(), "application/json"),
        ("notes.json", b'[{"colour": "blue"}]', "application/json"),
        ("broken.jsonl", b'{"x": 1}\n{"x": \n', "application/octet-stream"),
    ]
    app = open_page("import_export", engine, name="ada", role="admin")
    app.get("file_uploader")[0].set_value(uploads)
    app.run()
    assert not app.exception, app.exception
    errors = [element.value for element in app.error]
    assert len(errors) == 3, errors  # in import order: problems' files before candidates'
    assert errors[0].startswith(escape_markdown("notes.json: cannot tell the format"))
    assert errors[1].startswith(escape_markdown("broken.jsonl: "))
    assert errors[2] == escape_markdown(
        "unsol.json: record 2: field 'difficulty_eval': expected 0 (simple) or 1 (hard), got 'hard'"
    )
    assert not [button for button in app.button if button.key == "import_run"]


def test_a_release_zip_is_previewed_once_with_its_folder_named_once(engine: Engine, shared_data: Path) -> None:
    release = shared_data / "reliablemath"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(release.rglob("*")):
            if path.is_file():
                archive.write(path, f"reliablemath/{path.relative_to(release).as_posix()}")
    app = open_page("import_export", engine, name="ada", role="admin")
    app.get("file_uploader")[0].set_value([("reliablemath.zip", buffer.getvalue(), "application/zip")])
    app.run()
    assert not app.exception, app.exception
    table = app.dataframe[0].value.set_index("file")
    assert "reliablemath/solve.json" in table.index and not any("reliablemath/reliablemath" in f for f in table.index)
    assert table.loc["reliablemath/solve.json", "note"] == (
        "repeats solve/aime.json, solve/amc.json, solve/math.json, solve/minerva.json (counted once)"
    )
    assert table.loc["reliablemath/math_instruction.json", "note"] == "no records: kept as it is, and exported again"
    assert table.loc["reliablemath/unsol/aime.json", "note"] == ""
    said = [caption.value for caption in app.caption if caption.value.startswith("In all")]
    assert said == ["In all: 313 problems, 1102 candidates and 1102 labels, each counted once (a file that "
                    "repeats others is not counted again)."]


def test_an_export_with_nothing_to_write_says_so(engine: Engine) -> None:
    add_candidates(engine, 2)
    app = open_page("import_export", engine, name="ada", role="admin")
    assert not app.exception, app.exception
    buttons = {element.proto.label: element.proto for element in app.get("download_button")}
    assert not buttons["reliablemath"].disabled and not buttons["jsonl"].disabled
    assert buttons["labels"].disabled
    assert buttons["labels"].help == escape_markdown("Nothing to export: nobody has labelled a candidate yet.")
    assert buttons["treecut"].disabled
    said = [caption.value for caption in app.caption if caption.value.startswith("Nothing to export yet")]
    assert len(said) == 1 and escape_markdown("treecut: no TreeCut files were imported") in said[0]


def test_transcripts_from_a_harness_take_the_model_and_prompt_given(engine: Engine, shared_data: Path) -> None:
    """An lm-eval samples file uploaded alone (no results file beside it, its name changed): the page's
    --model / --prompt fields name what the file cannot."""
    from annotator.database.models import Transcript
    from annotator.import_export.formats import read
    from annotator.import_export.importer import import_parts

    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    samples = next((Path(__file__).resolve().parents[1] / "data" / "lm_eval" / "scripted-dummy").glob(
        "samples_reliablemath_aime_*.jsonl"))
    app = open_page("import_export", engine, name="ada", role="admin")
    app.get("file_uploader")[0].set_value([("answers.jsonl", samples.read_bytes(), "application/octet-stream")])
    app.run()
    assert [e.value for e in app.error] == [escape_markdown(
        "answers.jsonl: cannot tell the task from the file name (samples_<task>_<time>.jsonl); give --prompt")]
    app.text_input(key="import_prompt").set_value("boxed")
    app.run()
    assert [e.value for e in app.error] == [escape_markdown(
        "answers.jsonl: no results file of the same run beside it (results_<time>.json) to name the model; give "
        "--model")]
    app.text_input(key="import_model").set_value("qwen-math")
    app.run()
    assert not app.error and not app.exception, ([element.value for element in app.error], app.exception)
    assert app.dataframe[0].value.set_index("file").loc["answers.jsonl", "transcripts"] == 4
    app.button(key="import_run").click().run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        stored = session.execute(select(Transcript.model, Transcript.prompt, func.count()).group_by(
            Transcript.model, Transcript.prompt)).all()
    assert [tuple(row) for row in stored] == [("qwen-math", "boxed", 4)]


@pytest.fixture
def either_engine(database_url: str) -> Iterator[Engine]:
    made = get_engine(database_url)
    yield made
    made.dispose()


def _release_caption(app: AppTest) -> str:
    return next(caption.value for caption in app.caption if "reliablemath release" in caption.value)


def _stored_overview(engine: Engine) -> tuple[int, datetime | None]:
    with read_session(engine) as session:
        row = stored(session, key=OVERVIEW.key)
    assert row is not None
    return row.generation, row.computed_at


def test_the_counts_come_from_the_overviews_stored_figures(either_engine: Engine) -> None:
    """The release's counts are the Overview's shared figures (`figures.pages.OVERVIEW`): the same counts as
    counted from the database, stored once; a second look reads them again without recomputing, and a label saved
    meanwhile moves their fingerprint, so the next look counts it."""
    engine = either_engine
    ids = add_vetted_and_incomplete(engine)
    with read_session(engine) as session:
        counted = stats.compute(session)["total"]
    assert (counted["vetted"], counted["incomplete"]) == (1, 1)
    app = open_page("import_export", engine, name="ada", role="admin")
    assert _release_caption(app) == ("The reliablemath release holds 1 vetted candidate(s) (2 label(s) resolving to "
                                     "human_check = 1, or adjudicated so) and leaves out 1 incomplete one(s).")
    first = _stored_overview(engine)
    assert first[0] >= 1 and first[1] is not None
    app.run()
    assert not app.exception, app.exception
    assert _stored_overview(engine) == first  # read, not recomputed
    assert _release_caption(app).startswith("The reliablemath release holds 1 vetted candidate(s)")
    with write_session(engine) as session:  # the incomplete candidate's second label: now vetted
        bea = auth.account_id(session, name="bea")
        assert bea is not None
        labels.record_label(session, candidate_id=ids[1], annotator_id=bea, human_check=1, difficulty_eval=0)
    app.run()
    assert not app.exception, app.exception
    assert _stored_overview(engine)[0] > first[0]
    assert _release_caption(app).startswith("The reliablemath release holds 2 vetted candidate(s)")
    assert _release_caption(app).endswith("leaves out 0 incomplete one(s).")
