"""Whether another connection holds a SQLite file's write lock, asked the way a second writer would."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def write_locked(path: str | Path) -> bool:
    """True when `BEGIN IMMEDIATE` on a fresh connection fails at once because another holds the lock."""
    probe = sqlite3.connect(path, timeout=0)
    try:
        probe.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc)
    else:
        probe.rollback()
        return False
    finally:
        probe.close()
