"""Transcripts from the harnesses through the command line: `import` of lm-eval samples with
`--id-map`, `--model` and `--prompt`, of a Batch API output file, then `export --format inspect`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.support.cli import run_cli

DATA = PROJECT_ROOT / "tests" / "data"


def test_harness_files_in_and_an_inspect_log_out(tmp_path: Path, shared_data: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.sqlite'}"
    release = shared_data / "reliablemath"
    assert run_cli(url, "import", str(release / "solve" / "aime.json"), str(release / "unsol" / "aime.json")
                   ).returncode == 0
    plain = next((DATA / "lm_eval" / "scripted-dummy").glob("samples_aime_plain_*.jsonl"))
    missing = run_cli(url, "import", str(plain))
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "line 1: field 'doc.data_id': the doc has no such field" in missing.stderr
    imported = run_cli(url, "import", str(plain), "--id-map", str(DATA / "lm_eval" / "aime_plain_map.csv"),
                       "--model", "dummy-7b", "--prompt", "plain")
    assert imported.returncode == 0, imported.stderr
    assert "3 transcripts added and judged" in imported.stdout
    batch = run_cli(url, "import", str(DATA / "openai_batch" / "batch_output.jsonl"))
    assert batch.returncode == 0, batch.stderr
    assert "3 transcripts added and judged" in batch.stdout and "2 failed requests" in batch.stdout
    exported = run_cli(url, "export", "--format", "inspect", "--out", str(tmp_path / "logs"))
    assert exported.returncode == 0, exported.stderr
    manifest = json.loads((tmp_path / "logs" / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(entry["records"] for entry in manifest["files"].values()) == [3, 3]
