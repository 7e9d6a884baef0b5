"""The data commands end to end, as a user runs them: init, import, stats, export."""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.support.cli import run_cli
from tests.support.extras import without_module
from tests.support.imports import modules_loaded_by


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
    assert stats["total"]["vetted"] == 1102 and stats["sources"]["minerva"]["problems"] == 100
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


def test_a_name_option_that_is_no_name_is_a_usage_error_naming_the_option(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"data_id": "aime_0", "model": "m", "prompt": "p", "response": "1"}\n', encoding="utf-8")
    for option in ("--model", "--prompt", "--data-source", "--annotator"):
        result = run_cli(f"sqlite:///{tmp_path / 'a.sqlite'}", "import", str(answers), option, "gpt\u2066x")
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.strip().splitlines() == [
            f"error: {option} 'gpt\\u2066x' holds U+2066 LEFT-TO-RIGHT ISOLATE at character 4: names may not hold "
            "control, format or bidirectional characters"]


def test_import_help_lists_exactly_the_registered_formats() -> None:
    import typer.main

    from annotator.cli import app
    from annotator.cli.data import import_format_help
    from annotator.import_export.formats import aliases, registry

    listed = re.findall(r"(?:omitted\. |; )(\w+): ", import_format_help())
    assert listed == list(registry())
    for alias in aliases():
        assert alias in import_format_help()
    command = typer.main.get_command(app).commands["import"]  # type: ignore[attr-defined]
    (option,) = [p for p in command.params if "--format" in p.opts]
    assert option.help == import_format_help()
    shown = subprocess.run(
        [sys.executable, "-m", "annotator", "import", "--help"],
        cwd=PROJECT_ROOT,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert all(re.search(rf"\b{name}: ", shown) for name in registry())


def test_export_help_lists_every_exporter() -> None:
    from annotator.import_export.exports import EXPORTS

    shown = run_cli("sqlite://", "export", "--help").stdout
    assert all(name in shown for spec in EXPORTS for name in (spec.name, *spec.aliases))


def test_the_data_commands_import_nothing_heavy_at_start_up() -> None:
    """Each command imports what it needs when it runs; the module itself stays light, so every command starts fast."""
    tree = ast.parse((PROJECT_ROOT / "annotator" / "cli" / "data.py").read_text(encoding="utf-8"))
    top_level = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top_level.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            top_level.add(node.module or "")
    light = {"__future__", "pathlib", "typing", "typer", "annotator.import_export", "annotator.cli._app",
             "annotator.import_export.formats"}
    assert top_level == light
    heavy = ("sqlalchemy", "sqlmodel", "alembic", "pandas", "pyarrow", "openai", "annotator.database.engine",
             "annotator.figures.stats")
    statement = "import annotator.import_export.exports, annotator.import_export.formats"
    readers = ("annotator.import_export.importer", "annotator.import_export.formats.table")
    assert modules_loaded_by(statement, *heavy, *readers) == []


def test_an_export_with_nothing_to_write_says_so_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli(f"sqlite:///{tmp_path / 'a.sqlite'}", "export", "--format", "treecut", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "nothing to export: no TreeCut files were imported; nothing written\n"
    assert not out.exists()


def test_several_bad_files_are_each_told_and_nothing_is_stored(tmp_path: Path, shared_data: Path) -> None:
    """Each bad file's error on its own line, whichever step finds it: detection, or a record as it streams."""
    url = f"sqlite:///{tmp_path / 'a.sqlite'}"
    release = shared_data / "reliablemath"
    unsol = json.loads((release / "unsol" / "aime.json").read_text(encoding="utf-8"))
    unsol[1]["difficulty_eval"] = "hard"
    bad_unsol = tmp_path / "unsol.json"
    bad_unsol.write_text(json.dumps(unsol), encoding="utf-8")
    unknown = tmp_path / "notes.json"
    unknown.write_text('[{"colour": "blue"}]', encoding="utf-8")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"data_id": "aime_0"}\n{"data_id": \n', encoding="utf-8")
    result = run_cli(url, "import", str(release / "solve" / "aime.json"), str(bad_unsol), str(unknown), str(broken))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith("error: ") for line in lines), result.stderr
    assert lines[0].startswith(f"error: {bad_unsol}: record 2: field 'difficulty_eval'")
    assert lines[1].startswith(f"error: {unknown}: cannot tell the format")
    assert lines[2].startswith(f"error: {broken}: ")
    assert json.loads(run_cli(url, "stats", "--json").stdout)["problems"] == 0


NEEDS_INSPECT = 'Inspect AI logs needs the "inspect" extra: pip install -e ".[inspect]"'


def _transcript_count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM transcript").fetchone()[0])


def test_inspect_logs_without_the_inspect_extra_say_which_extra_in_one_line(tmp_path: Path,
                                                                           shared_data: Path) -> None:
    """An install without inspect-ai: reading or writing an Inspect log is one line naming the extra, nothing
    stored or written; every other format still imports and exports."""
    from tests.support.inspect_logs import inspect_log

    db = tmp_path / "a.sqlite"
    url = f"sqlite:///{db}"
    assert run_cli(url, "import", str(shared_data / "reliablemath" / "solve" / "aime.json")).returncode == 0
    env = {**without_module("inspect_ai", tmp_path / "no-inspect"), "ANNOTATOR_DATABASE_URL": url}

    def without_inspect(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                              timeout=120)

    assert "ModuleNotFoundError: No module named 'inspect_ai'" in without_inspect("-c", "import inspect_ai").stderr
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"data_id": "aime_0", "model": "m", "prompt": "p", "response": "\\boxed{204}"})
                       + "\n", encoding="utf-8")
    imported = without_inspect("-m", "annotator", "import", str(answers))
    assert imported.returncode == 0 and "1 transcripts added" in imported.stdout, imported.stderr
    logs = [inspect_log(tmp_path / "run.eval"), inspect_log(tmp_path / "run.json")]
    for args in ([str(logs[0])], [str(logs[1])], [*map(str, logs)], ["--format", "inspect_log", str(logs[1])]):
        result = without_inspect("-m", "annotator", "import", *args)
        assert (result.returncode, result.stdout) == (1, ""), args
        assert result.stderr == f"error: reading {NEEDS_INSPECT}\n", args
    assert _transcript_count(db) == 1
    for name in ("inspect_log", "inspect"):
        result = without_inspect("-m", "annotator", "export", "--format", name, "--out", str(tmp_path / name))
        assert (result.returncode, result.stdout, result.stderr) == (1, "", f"error: writing {NEEDS_INSPECT}\n")
        assert not (tmp_path / name).exists()
    exported = without_inspect("-m", "annotator", "export", "--format", "transcripts", "--out", str(tmp_path / "t"))
    assert exported.returncode == 0 and (tmp_path / "t" / "manifest.json").is_file(), exported.stderr
