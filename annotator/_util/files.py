"""Files as readers and writers share them: checksums (what an import remembers of a file and an export's
manifest lists) and writing an exported file."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MB blocks so memory does not grow with the file."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_file(path: Path, text: str) -> None:
    """`text` as UTF-8 bytes at `path`, exactly (no newline translation), creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
