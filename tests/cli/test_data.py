"""The data commands end to end, as a user runs them: init, import, stats, export."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.test_importer import run_cli


def test_init_creates_the_default_style_database_with_wal(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "annotator.sqlite"
    result = run_cli(f"sqlite:///{db}", "init")
    assert result.returncode == 0, result.stderr
    assert "revision" in result.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"problem", "candidate", "annotation", "annotationevent", "annotator", "alembic_version"} <= tables


def test_release_through_the_cli(tmp_path: Path, shared_data: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.sqlite'}"
    release = shared_data / "reliablemath"
    imported = run_cli(url, "import", str(release))
    assert imported.returncode == 0, imported.stderr
    assert "313 problems and 1102 candidates added" in imported.stdout

    first, second = run_cli(url, "stats", "--json"), run_cli(url, "stats", "--json")
    assert first.returncode == 0 and first.stdout == second.stdout
    stats = json.loads(first.stdout)
    assert stats["total"]["kept"] == 1102 and stats["sources"]["minerva"]["problems"] == 100
    assert run_cli(url, "import", str(release)).stdout.count("0 problems and 0 candidates added") == 1
    assert run_cli(url, "stats", "--json").stdout == first.stdout

    text = run_cli(url, "stats").stdout
    assert "minerva" in text and "1102" in text

    out = tmp_path / "export"
    exported = run_cli(url, "export", "--format", "reliablemath", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert (out / "unsol.json").read_bytes() == (release / "unsol.json").read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "reliablemath" and manifest["files"]["unsol.json"]["records"] == 1102


def test_unknown_export_format_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(f"sqlite:///{tmp_path / 'a.sqlite'}", "export", "--format", "xlsx")
    assert result.returncode == 2 and "unknown export format 'xlsx'" in result.stderr


def test_missing_path_is_reported(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = run_cli(f"sqlite:///{tmp_path / 'a.sqlite'}", "import", str(missing))
    assert result.returncode == 1 and f"{missing}: no such file or directory" in result.stderr
