"""Data in and out through the browser's core (issue 12): uploads unpacked, previewed and imported as the
command line imports the same files; exports zipped byte for byte as `export` writes them."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator import exports, stats, transfer
from annotator.db import get_engine, read_session
from annotator.formats import InputError, ReadOptions, read
from annotator.importer import import_parts
from annotator.models import Candidate, Problem
from tests.exports.test_reliablemath import RELEASE_FILES


def release_zip(release: Path) -> bytes:
    """The release folder zipped as a user would: one top folder, its README and instructions beside."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(release.rglob("*")):
            if path.is_file():
                archive.write(path, f"ReliableMath/{path.relative_to(release).as_posix()}")
        archive.writestr("__MACOSX/ReliableMath/._solve.json", b"\0")
    return buffer.getvalue()


def counts(engine: Engine) -> str:
    with read_session(engine) as session:
        return stats.to_json(stats.compute(session))


def test_a_release_zip_previews_and_imports_as_the_cli_imports_it(
    engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    release = shared_data / "reliablemath"
    with transfer.unpacked([("ReliableMath.zip", release_zip(release))]) as batch:
        assert [batch.name(path) for path in batch.paths] == ["ReliableMath/ReliableMath"]
        previews = transfer.preview(batch)
        assert {p.file: (p.format, p.problems, p.candidates, p.labels) for p in previews}[
            "ReliableMath/ReliableMath/unsol.json"
        ] == ("reliablemath", 0, 1102, 1102)
        assert [p.file.split("ReliableMath/", 2)[-1] for p in previews] == [
            "solve.json", *(f"solve/{s}.json" for s in ("aime", "amc", "math", "minerva")),
            "unsol.json", *(f"unsol/{s}.json" for s in ("aime", "amc", "math", "minerva")),
        ]
        assert previews[0].first[0]["question"] and len(previews[0].first) == transfer.PREVIEW_RECORDS
        with read_session(engine) as session:  # a preview stores nothing
            assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0
        summary = transfer.import_batch(batch, engine=engine)
    assert summary.files[0] == "ReliableMath/ReliableMath/solve.json"
    cli = get_engine(f"sqlite:///{tmp_path / 'cli.sqlite'}")
    cli_summary = import_parts(read(release), engine=cli)
    assert summary.text() == cli_summary.text()
    assert counts(engine) == counts(cli)


def test_single_files_are_imported_problems_first(sqlite_engine: Engine, shared_data: Path) -> None:
    release = shared_data / "reliablemath"
    uploads = [(name, (release / name).read_bytes()) for name in ("unsol.json", "solve.json")]
    with transfer.unpacked(uploads) as batch:
        assert [path.name for path in batch.paths] == ["solve.json", "unsol.json"]
        summary = transfer.import_batch(batch, engine=sqlite_engine)
    assert (summary.problems_added, summary.candidates_added) == (313, 1102)
    assert summary.files == ["solve.json", "unsol.json"]


def test_a_flat_table_with_a_column_mapping(sqlite_engine: Engine) -> None:
    rows = [{"problem": "1+1?", "answer": 2, "src": "toy"}, {"problem": "2+2?", "answer": "4", "src": "toy"}]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    options = ReadOptions(mapping={"question": "problem", "ground_truth": "answer", "data_source": "src"})
    with transfer.unpacked([("rows.jsonl", data)]) as batch:
        [shown] = transfer.preview(batch, options=options)
        assert (shown.format, shown.problems, shown.first[0]["ground_truth"]) == ("table", 2, 2)
        transfer.import_batch(batch, engine=sqlite_engine, options=options)
    with read_session(sqlite_engine) as session:
        assert session.execute(select(Problem.ground_truth).order_by(Problem.position)).scalars().all() == [2, "4"]


def test_a_bad_file_names_itself_as_uploaded_and_stores_nothing(sqlite_engine: Engine, shared_data: Path) -> None:
    release = shared_data / "reliablemath"
    unsol = json.loads((release / "unsol.json").read_text(encoding="utf-8"))
    unsol[2]["difficulty_eval"] = "hard"
    uploads = [("solve.json", (release / "solve.json").read_bytes()), ("unsol.json", json.dumps(unsol).encode())]
    with pytest.raises(InputError) as error, transfer.unpacked(uploads) as batch:
        transfer.import_batch(batch, engine=sqlite_engine)
    assert str(error.value) == (
        "unsol.json: record 2: field 'difficulty_eval': expected 0 (simple) or 1 (hard), got 'hard'"
    )
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() == 0


@pytest.mark.parametrize(
    ("uploads", "message"),
    [
        ([("a.json", b"[]"), ("a.json", b"[]")], "a.json: was uploaded twice"),
        ([("x.zip", b"not a zip")], "x.zip: is not a valid .zip file"),
        ([("notes.txt", b"hello")], "notes.txt: unsupported file type '.txt'"),
    ],
)
def test_uploads_that_cannot_be_imported(
    sqlite_engine: Engine, uploads: list[tuple[str, bytes]], message: str
) -> None:
    with pytest.raises(InputError, match=message), transfer.unpacked(uploads) as batch:
        transfer.preview(batch)


def test_a_zip_member_outside_the_folder_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../escape.json", "[]")
    with pytest.raises(InputError, match=r"evil.zip: member '../escape.json' points outside the archive"):
        transfer.unpack([("evil.zip", buffer.getvalue())], into=tmp_path)
    assert not (tmp_path.parent / "escape.json").exists()


def test_the_export_zip_holds_the_cli_export_byte_for_byte(
    engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    import_parts(read(shared_data / "reliablemath"), engine=engine)
    manifest = exports.export("reliablemath", tmp_path / "cli", engine=engine)
    with zipfile.ZipFile(io.BytesIO(transfer.export_zip("reliablemath", engine=engine))) as archive:
        names = archive.namelist()
        assert sorted(names) == sorted([*RELEASE_FILES, "manifest.json"])
        for name in RELEASE_FILES:
            assert archive.read(name) == (tmp_path / "cli" / name).read_bytes(), name
        zipped = json.loads(archive.read("manifest.json"))
    # The manifests differ only in when they were written.
    assert {**zipped, "exported_at": None} == {**manifest, "exported_at": None}
