"""The ReliableMath release export: the released files written back byte for byte, with a manifest."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from annotator.import_export.exports import export
from tests.support.release import RELEASE_FILES, import_release


def test_release_round_trip_is_byte_for_byte(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    release = shared_data / "reliablemath"
    import_release(engine, release)
    manifest = export("reliablemath", tmp_path / "out", engine=engine)
    for name in RELEASE_FILES:
        assert (tmp_path / "out" / name).read_bytes() == (release / name).read_bytes(), name
    assert manifest["files"]["unsol.json"]["records"] == 1102
    assert manifest["files"]["solve.json"]["records"] == 313
    on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert set(on_disk["files"]) == set(RELEASE_FILES)
    assert on_disk["version"] and on_disk["exported_at"]


def test_math_instruction_is_written_only_when_the_release_had_it(engine: Engine, shared_data: Path,
                                                                  tmp_path: Path) -> None:
    """A release imported without its prompts exports none; with them, byte for byte (even a byte order mark,
    CRLF line ends and escapes json.dumps would not write), and once more after a re-import."""
    release = tmp_path / "release"
    (release / "solve").mkdir(parents=True)
    (release / "solve" / "aime.json").write_bytes((shared_data / "reliablemath" / "solve" / "aime.json").read_bytes())
    import_release(engine, release)
    export("reliablemath", tmp_path / "without", engine=engine)
    assert not (tmp_path / "without" / "math_instruction.json").exists()
    odd = b'\xef\xbb\xbf{\r\n  "std": "Let\\u2018s think",\r\n  "real": "it\xe2\x80\x99s"\r\n}'
    (release / "math_instruction.json").write_bytes(odd)
    import_release(engine, release)
    manifest = export("reliablemath", tmp_path / "with", engine=engine)
    assert (tmp_path / "with" / "math_instruction.json").read_bytes() == odd
    assert manifest["files"]["math_instruction.json"]["records"] == 0
