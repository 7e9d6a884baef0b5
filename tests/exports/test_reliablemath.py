"""The ReliableMath release export: the released files written back byte for byte, with a manifest."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from annotator.exports import export
from tests.formats.test_reliablemath import import_release

RELEASE_FILES = (
    "solve.json",
    "unsol.json",
    *(f"{kind}/{source}.json" for kind in ("solve", "unsol") for source in ("aime", "amc", "math", "minerva")),
)


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
