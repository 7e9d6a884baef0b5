"""Every export of one fixed database, written through the command line, for a byte comparison of two versions
of the code (a refactoring of the writers must not move a byte).

    python tests/support/export_snapshot.py --repo /work/main /tmp/before
    python tests/support/export_snapshot.py --repo . /tmp/after
    diff -r /tmp/before /tmp/after

The database: the shared ReliableMath release, TreeCut, GSM-IC and UMWP files, two annotators' labels (one
changed, so that the history has an update; a comment a spreadsheet would run), and transcripts of two
models. Label times are set to fixed values so that the label files can be compared. Each manifest's
`exported_at` is the one thing that differs between runs: it is blanked.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
UMWP = [
    {"id": 1, "question": "Tom has 3 apples and buys 4 more. How many?", "answer": [7.0], "answerable": True,
     "category": None, "relevant_ids": None, "source": "SVAMP"},
    {"id": 2, "question": "Tom has some apples and buys 4 more. How many?", "answer": None, "answerable": False,
     "category": 1, "relevant_ids": [1], "source": "SVAMP"},
]
# (format, out directory, extra arguments)
EXPORTS = [
    ("reliablemath", "reliablemath", []),
    ("reliablemath", "reliablemath-incomplete", ["--include-incomplete"]),
    ("annotation", "annotation", []),
    ("jsonl", "jsonl", []),
    ("csv", "csv", []),
    ("parquet", "parquet", []),
    ("treecut", "treecut", []),
    ("umwp", "umwp", []),
    ("gsm-ic", "gsm-ic", []),
    ("labels", "labels-jsonl", []),
    ("labels", "labels-csv", ["--as", "csv", "--with-history"]),
    ("labels", "labels-parquet", ["--as", "parquet", "--with-history"]),
    ("labels", "labels-jsonl-history", ["--with-history"]),
    ("transcripts", "transcripts", []),
]


def _run(repo: Path, env: dict[str, str], *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "annotator", *args], cwd=repo, env=env, capture_output=True,
                            text=True, check=False)
    if result.returncode:
        raise SystemExit(f"{' '.join(args)}: {result.stdout}{result.stderr}")
    return result.stdout


def _sheets(annotation: Path, work: Path) -> list[tuple[str, Path]]:
    """Two annotators' labelled sheets over the first 40 candidates, and alice's second thoughts on five."""
    rows = json.loads(annotation.read_text(encoding="utf-8"))[:40]
    sheets = []
    for name, flip in (("alice", 7), ("bob", 5), ("alice-again", 3)):
        labelled = []
        for index, row in enumerate(rows if name != "alice-again" else rows[:5]):
            check = 0 if index % flip == 0 else 1
            labelled.append({**row, "human_check": check, "difficulty_eval": (index % 2) if check else None})
        path = work / f"{name}.json"
        path.write_text(json.dumps(labelled, ensure_ascii=False), encoding="utf-8")
        sheets.append((name.removesuffix("-again"), path))
    return sheets


def _transcripts(annotation: Path, work: Path) -> Path:
    rows = json.loads(annotation.read_text(encoding="utf-8"))[:12]
    lines = [
        json.dumps({"data_id": row["unsol_id"], "model": model, "prompt": "standard", "sample": 0,
                    "response": f"Thinking about {row['unsol_id']}… =SUM(A1) the answer is $\\boxed{{{index}}}$."},
                   ensure_ascii=False)
        for index, row in enumerate(rows) for model in ("model-a", "model-b")
    ]
    path = work / "transcripts.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _fix_times(database: Path) -> None:
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE annotation SET created_at = '2026-01-02 03:04:05.000006', "
                           "updated_at = '2026-01-02 03:04:06.000007'")
        # A throwaway database: its append-only guard is lifted to pin the event times.
        connection.execute("DROP TRIGGER annotationevent_no_update")
        connection.execute("UPDATE annotationevent SET at = '2026-01-02 03:04:05.000006'")


def snapshot(repo: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        database = work / "snapshot.sqlite"
        env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{database}"}
        umwp = work / "UMWP.jsonl"
        umwp.write_text("".join(json.dumps(record) + "\n" for record in UMWP), encoding="utf-8")
        gsm_ic = work / "GSM-IC_2step.json"
        rows = json.loads((SHARED / "gsm_ic" / "verbatim_rows_quoted_by_thirdparty.json").read_text("utf-8"))
        gsm_ic.write_text(json.dumps(rows["split_2step"], indent=2), encoding="utf-8")
        treecut = sorted((SHARED / "treecut").glob("*numVars-4*.jsonl"))
        _run(repo, env, "import", str(SHARED / "reliablemath"), *map(str, treecut), str(umwp), str(gsm_ic))
        _run(repo, env, "export", "--format", "annotation", "--out", str(work / "sheet"))
        for annotator, sheet in _sheets(work / "sheet" / "annotation.json", work):
            _run(repo, env, "import", str(sheet), "--annotator", annotator, "--update")
        _run(repo, env, "import", str(_transcripts(work / "sheet" / "annotation.json", work)))
        _fix_times(database)
        for format, directory, extra in EXPORTS:
            _run(repo, env, "export", "--format", format, "--out", str(out / directory), *extra)
            manifest = out / directory / "manifest.json"
            if manifest.exists():
                data = json.loads(manifest.read_text(encoding="utf-8"))
                data["exported_at"] = "-"
                manifest.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("out", type=Path)
    arguments = parser.parse_args()
    snapshot(arguments.repo.resolve(), arguments.out.resolve())


if __name__ == "__main__":
    main()
