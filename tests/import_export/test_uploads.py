"""Data in and out through the browser's core: uploads unpacked, previewed and imported as the
command line imports the same files; exports zipped byte for byte as `export` writes them."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Candidate, Problem
from annotator.figures import stats
from annotator.import_export import exports
from annotator.import_export import uploads as transfer
from annotator.import_export.formats import InputError, ReadOptions, read
from annotator.import_export.importer import import_parts
from annotator.settings import limits
from tests.support.release import RELEASE_FILES


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
    with transfer.unpacked([("ReliableMath.zip", release_zip(release))]) as upload:
        # A zip of one folder of its own name: the folder is named once.
        assert [upload.name(path) for path in upload.paths] == ["ReliableMath"]
        previews = transfer.preview(upload)
        assert {p.file: (p.format, p.problems, p.candidates, p.labels) for p in previews}[
            "ReliableMath/unsol.json"
        ] == ("reliablemath", 0, 1102, 1102)
        assert [p.file.removeprefix("ReliableMath/") for p in previews] == [
            "solve.json", *(f"solve/{s}.json" for s in ("aime", "amc", "math", "minerva")),
            "unsol.json", *(f"unsol/{s}.json" for s in ("aime", "amc", "math", "minerva")), "math_instruction.json",
        ]
        # solve.json and unsol.json repeat the per-source files: the totals count each record once.
        assert [p.file for p in previews if p.repeats] == ["ReliableMath/solve.json", "ReliableMath/unsol.json"]
        assert transfer.totals(previews) == {"problems": 313, "candidates": 1102, "labels": 1102, "transcripts": 0}
        assert previews[0].first[0]["question"] and len(previews[0].first) == transfer.PREVIEW_RECORDS
        with read_session(engine) as session:  # a preview stores nothing
            assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0
        summary = transfer.import_upload(upload, engine=engine)
    assert summary.files[0] == "ReliableMath/solve.json"
    cli = get_engine(f"sqlite:///{tmp_path / 'cli.sqlite'}")
    cli_summary = import_parts(read(release), engine=cli)
    assert summary.text() == cli_summary.text()
    assert counts(engine) == counts(cli)


def test_single_files_are_imported_problems_first(sqlite_engine: Engine, shared_data: Path) -> None:
    release = shared_data / "reliablemath"
    uploads = [(name, (release / name).read_bytes()) for name in ("unsol.json", "solve.json")]
    with transfer.unpacked(uploads) as upload:
        assert [path.name for path in upload.paths] == ["solve.json", "unsol.json"]
        summary = transfer.import_upload(upload, engine=sqlite_engine)
    assert (summary.problems_added, summary.candidates_added) == (313, 1102)
    assert summary.files == ["solve.json", "unsol.json"]


def test_a_flat_table_with_a_column_mapping(sqlite_engine: Engine) -> None:
    rows = [{"problem": "1+1?", "answer": 2, "src": "toy"}, {"problem": "2+2?", "answer": "4", "src": "toy"}]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    options = ReadOptions(mapping={"question": "problem", "ground_truth": "answer", "data_source": "src"})
    with transfer.unpacked([("rows.jsonl", data)]) as upload:
        [shown] = transfer.preview(upload, options=options)
        assert (shown.format, shown.problems, shown.first[0]["ground_truth"]) == ("table", 2, 2)
        transfer.import_upload(upload, engine=sqlite_engine, options=options)
    with read_session(sqlite_engine) as session:
        assert session.execute(select(Problem.ground_truth).order_by(Problem.position)).scalars().all() == [2, "4"]


def test_a_bad_file_names_itself_as_uploaded_and_stores_nothing(sqlite_engine: Engine, shared_data: Path) -> None:
    release = shared_data / "reliablemath"
    unsol = json.loads((release / "unsol.json").read_text(encoding="utf-8"))
    unsol[2]["difficulty_eval"] = "hard"
    uploads = [("solve.json", (release / "solve.json").read_bytes()), ("unsol.json", json.dumps(unsol).encode())]
    with pytest.raises(InputError) as error, transfer.unpacked(uploads) as upload:
        transfer.import_upload(upload, engine=sqlite_engine)
    assert str(error.value) == (
        "unsol.json: record 3: field 'difficulty_eval': expected 0 (simple) or 1 (hard), got 'hard'"
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
    with pytest.raises(InputError, match=message), transfer.unpacked(uploads) as upload:
        transfer.preview(upload)


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


def _zip(*members: tuple[str | zipfile.ZipInfo, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def _symlink(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


RECORDS = b'[{"question": "q"}]'


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([("a", b"x"), ("a/b.json", RECORDS)], "member 'a/b.json' is inside 'a', which is a file"),
        ([("a/b.json", RECORDS), ("a", b"x")], "member 'a' is a file and a folder of other members"),
        ([("x" * 500 + ".json", RECORDS)], r"has a name of 505 characters \(at most 400\)"),
        ([("/".join(["d"] * 20) + "/x.json", RECORDS)], r"is nested 20 folders deep \(at most 16\)"),
        ([("../x.json", RECORDS)], "member '../x.json' points outside the archive"),
        ([("/etc/x.json", RECORDS)], "member '/etc/x.json' points outside the archive"),
        ([("C:/x.json", RECORDS)], "member 'C:/x.json' points outside the archive"),
        ([("..\\x.json", RECORDS)], "points outside the archive"),
        ([(_symlink("link.json"), b"/etc/passwd")], "member 'link.json' is a symbolic link"),
        ([("bomb.json", bytes(50_000_000))], r"unpacks [\d,]+ times its packed size .*: a zip bomb\?"),
    ],
)
def test_archives_we_do_not_unpack(tmp_path: Path, members: list[tuple[object, bytes]], message: str) -> None:
    with pytest.raises(InputError) as refused:
        transfer.unpack([("up.zip", _zip(*members))], into=tmp_path)  # type: ignore[arg-type]
    assert str(refused.value).startswith("up.zip: ") and "\n" not in str(refused.value)
    assert re.search(message, str(refused.value)), str(refused.value)
    # Checked whole before anything is written.
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_bad_crc_is_one_line(tmp_path: Path) -> None:
    data = bytearray(_zip(("a.json", RECORDS), compression=zipfile.ZIP_STORED))
    data[data.index(b'"q"')] = ord("X")  # the stored bytes no longer match the CRC-32 in the headers
    with pytest.raises(InputError) as refused:
        transfer.unpack([("damaged.zip", bytes(data))], into=tmp_path)
    assert str(refused.value) == "damaged.zip: member 'a.json' cannot be unpacked: Bad CRC-32 for file 'a.json'"


def test_a_truncated_archive_is_one_line(tmp_path: Path) -> None:
    data = _zip(("a.json", RECORDS))
    with pytest.raises(InputError, match=r"^cut.zip: is not a valid \.zip file \(File is not a zip file\)$"):
        transfer.unpack([("cut.zip", data[: len(data) // 2])], into=tmp_path)


def test_the_allowance_is_per_upload_across_its_archives_and_files(tmp_path: Path) -> None:
    one = _zip(("a/one.json", bytes(400_000)))
    # Each archive alone is within 1 MB unpacked; together with the plain file they are not.
    (tmp_path / "alone").mkdir()
    assert len(transfer.unpack([("x.zip", one)], into=tmp_path / "alone", max_bytes=1_000_000).paths) == 1
    uploads = [("x.zip", one), ("y.zip", one), ("z.json", bytes(300_000))]
    (tmp_path / "together").mkdir()
    with pytest.raises(InputError, match=r"^z\.json: makes the upload larger than 1,000,000 bytes unpacked$"):
        transfer.unpack(uploads, into=tmp_path / "together", max_bytes=1_000_000)


def test_too_many_entries_across_archives_with_the_real_limit(tmp_path: Path) -> None:
    half = limits.UPLOAD_ENTRIES // 2
    first = _zip(*((f"f{i}.json", b"[]") for i in range(half)), compression=zipfile.ZIP_STORED)
    with pytest.raises(InputError, match=rf"^second\.zip: makes the upload hold more than {limits.UPLOAD_ENTRIES:,} "):
        transfer.unpack([("first.zip", first), ("second.zip", first)], into=tmp_path)
    assert not (tmp_path / "second").exists() or not any((tmp_path / "second").iterdir())


_DIES_MID_IMPORT = """
import os, signal, sys
from annotator.import_export import uploads as transfer
with transfer.unpacked([("up.json", b'[{"question": "q"}]')]) as upload:
    print(upload.root, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # the server dies mid-import
"""
_LATER_SERVER = """
from annotator.import_export import uploads as transfer
with transfer.unpacked([("up.json", b'[{"question": "q"}]')]) as upload:
    print(upload.root, flush=True)
"""


def _python(program: str, root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANNOTATOR_TMP_DIR": str(root)}
    return subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)


def test_a_folder_left_by_a_server_that_died_is_removed_at_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "tmp"
    died = _python(_DIES_MID_IMPORT, root)
    assert died.returncode == -signal.SIGKILL
    left = Path(died.stdout.strip())
    assert left.parent == root and left.name.startswith("upload-") and (left / "up.json").is_file()
    ours = root / f"upload-{os.getpid()}-alive"  # a folder of a process that is still running
    ours.mkdir()
    unrelated = root / "someone-elses"
    unrelated.mkdir()
    later = _python(_LATER_SERVER, root)
    assert later.returncode == 0, later.stderr
    assert not left.exists() and not Path(later.stdout.strip()).exists()
    assert ours.is_dir() and unrelated.is_dir()
    old = os.stat(ours).st_mtime - transfer.STALE_SECONDS - 60
    os.utime(ours, (old, old))  # a day old: its process id may have been reused meanwhile
    assert transfer.clean_stale(root) == [ours] and unrelated.is_dir()


def _patched(data: bytes, *, local: int, central: int, value: int, width: int = 2, bits: bool = False) -> bytes:
    """`data` with a field of the (only) member's local header and central directory entry set to `value`."""
    raw = bytearray(data)
    for offset in (local, raw.index(b"PK\x01\x02") + central):
        old = int.from_bytes(raw[offset : offset + width], "little")
        raw[offset : offset + width] = ((old | value) if bits else value).to_bytes(width, "little")
    return bytes(raw)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"local": 6, "central": 8, "value": 1, "bits": True}, "is encrypted, password required for extraction"),
        ({"local": 8, "central": 10, "value": 99}, "That compression method is not supported"),
    ],
)
def test_members_zipfile_cannot_read_are_one_line(tmp_path: Path, patch: dict[str, int], message: str) -> None:
    data = _patched(_zip(("a.json", RECORDS)), **patch)
    with pytest.raises(InputError) as refused:
        transfer.unpack([("odd.zip", data)], into=tmp_path)
    assert str(refused.value).startswith("odd.zip: member 'a.json' cannot be unpacked: ")
    assert str(refused.value).endswith(message) and "\n" not in str(refused.value)


def test_a_zip_of_a_folder_of_another_name_keeps_both_names(sqlite_engine: Engine, shared_data: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(shared_data / "reliablemath" / "solve" / "aime.json", "release/solve/aime.json")
        archive.writestr("release/release/notes.txt", "a folder named as its parent stays where it is")
    with transfer.unpacked([("release.zip", buffer.getvalue())]) as upload:
        assert sorted(upload.name(p) for p in upload.paths) == ["release"]
        assert (upload.root / "release" / "release" / "notes.txt").is_file()
    with transfer.unpacked([("upload.zip", buffer.getvalue())]) as upload:
        assert [upload.name(p) for p in upload.paths] == ["upload/release"]
