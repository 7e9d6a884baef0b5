"""The ReliableMath release: its files, and importing it."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts


def import_release(engine: Engine, release: Path) -> None:
    import_parts(read(release), engine=engine)


RELEASE_FILES = (
    "solve.json",
    "unsol.json",
    *(f"{kind}/{source}.json" for kind in ("solve", "unsol") for source in ("aime", "amc", "math", "minerva")),
    "math_instruction.json",
)
