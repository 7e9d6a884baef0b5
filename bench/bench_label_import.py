"""Importing N labels from an annotation sheet onto candidates already in the database, against a baseline
measured in the same run.

    python bench/bench_label_import.py [--labels 100000] [--repeat 3] [--against REV]

The sheet is the paper's Fig. 10 layout (`unsol_id, data_source, question, ground_truth, rewritten_condition,
rewritten_question, unsolvable_reason, human_check, difficulty_eval`) as one JSON array, the way a team hands
back an annotator's sheet. Untimed set-up: the same rows without labels are imported first, so every label
lands on an existing candidate (the path that records labels onto stored candidates); each repeat starts from a
copy of that database (with `--against`, of one each side's code prepared). Timed: `python -m annotator import
sheet.json --annotator alice`'s code path, from reading the file to the commit (labels, their events and the
candidates' resolved labels, in one transaction); also reading the sheet into records alone, with no database.
Baseline: `json.load` of the same file plus one raw `executemany` of the same rows into a bare SQLite table.
Also the write floor: the writes our schema needs (labels, events, resolved labels, with their indexes) on raw
`sqlite3` with no other work. Each measurement runs in a fresh subprocess and times only the operation. With
`--against REV` the import of the code at git revision REV (a copy made with `git archive`) is timed too, on a
copy of the same database, alternating with ours: an A/B in one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PER_PROBLEM = 6
FIELDS = (
    "unsol_id",
    "data_source",
    "question",
    "ground_truth",
    "rewritten_condition",
    "rewritten_question",
    "unsolvable_reason",
    "human_check",
    "difficulty_eval",
)


def make_sheets(directory: Path, n: int) -> tuple[Path, Path]:
    """The labelled sheet and the same rows without labels."""
    rows = []
    for i in range(n):
        problem, k = divmod(i, PER_PROBLEM)
        kind = "remove" if k % 2 == 0 else "contradict"
        accepted = i % 5 != 0  # about 80% pass, as in ReliableMath
        rows.append(
            {
                "unsol_id": f"bench_{problem}_{kind}_{k // 2 + 1}",
                "data_source": "bench",
                "question": f"Problem {problem}: a train travels at $v = {k + 3}$ km/h for $3$ hours. How far?",
                "ground_truth": str((k + 3) * 3),
                "rewritten_condition": f"The speed $v = {k + 3}$ km/h was removed.",
                "rewritten_question": f"Candidate {i}: a train travels for $3$ hours. How far has it gone?",
                "unsolvable_reason": "Without the speed the distance cannot be determined.",
                "human_check": 1 if accepted else 0,
                "difficulty_eval": (i % 3 == 0) * 1 if accepted else None,
            }
        )
    labelled, unlabelled = directory / "sheet.json", directory / "unlabelled.json"
    labelled.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    blank = [{**row, "human_check": None, "difficulty_eval": None} for row in rows]
    unlabelled.write_text(json.dumps(blank, indent=1, ensure_ascii=False), encoding="utf-8")
    return labelled, unlabelled


def baseline(path: Path, db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute(f"CREATE TABLE label (id INTEGER PRIMARY KEY, {', '.join(FIELDS)})")
    conn.commit()
    start = time.perf_counter()
    with path.open(encoding="utf-8") as handle:
        rows = [tuple(row[f] for f in FIELDS) for row in json.load(handle)]
    conn.executemany(f"INSERT INTO label ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))})", rows)
    conn.commit()
    print(json.dumps({"seconds": time.perf_counter() - start}))


def floor(path: Path, db: Path) -> None:
    """What the writes alone cost on our schema: `json.load`, then the three executemany statements a label
    import must run (labels, their events, the candidates' resolved labels) with ready-made tuples on raw
    `sqlite3`, foreign keys on as the app has them. No validation, no matching, no SQLAlchemy."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(
        "INSERT INTO annotator (name, role, is_system, is_active, created_at) "
        "VALUES ('alice', 'annotator', 1, 1, '2026-11-23 00:00:00.000000')"
    )
    annotator = conn.execute("SELECT id FROM annotator WHERE name = 'alice'").fetchone()[0]
    ids = dict(conn.execute("SELECT data_id, id FROM candidate"))
    conn.commit()
    now = "2026-11-23 00:00:00.000000"
    parts: dict[str, float] = {}
    start = mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        parts[name], mark = time.perf_counter() - mark, time.perf_counter()

    with path.open(encoding="utf-8") as handle:
        rows = json.load(handle)
    lap("json.load")
    labels = [(ids[r["unsol_id"]], annotator, r["human_check"], r["difficulty_eval"], None, now, now) for r in rows]
    conn.executemany(
        "INSERT INTO annotation (candidate_id, annotator_id, human_check, difficulty_eval, comment, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)", labels,
    )
    lap("labels")
    events = [(c, a, "create", None, json.dumps({"human_check": h, "difficulty_eval": d, "comment": None}), now)
              for c, a, h, d, _, _, _ in labels]
    lap("events' JSON")
    conn.executemany(
        "INSERT INTO annotationevent (candidate_id, annotator_id, action, old, new, at) VALUES (?, ?, ?, ?, ?, ?)",
        events,
    )
    lap("events")
    conn.executemany(
        "UPDATE candidate SET label_count = 1, human_check = ?, difficulty_eval = ?, label_source = 'single', "
        "updated_at = ? WHERE id = ?", [(h, d, now, c) for c, _, h, d, _, _, _ in labels],
    )
    lap("resolved labels")
    conn.commit()
    lap("commit")
    print(json.dumps({"seconds": time.perf_counter() - start, "parts": parts}))


def ours(path: Path, db: Path) -> None:
    from annotator.database.engine import get_engine
    from annotator.import_export.formats import ReadOptions, read
    from annotator.import_export.importer import import_parts

    engine = get_engine(f"sqlite:///{db}")
    start, cpu = time.perf_counter(), time.process_time()
    # Read as `import_parts` reads: the whole path from the file to the commit (it may read while it writes).
    summary = import_parts(read(path, options=ReadOptions(annotator="alice")), engine=engine)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    # CPU time too: on a shared machine the wall clock also counts the time other processes held the cores.
    print(json.dumps({"seconds": seconds, "cpu": cpu, "labels_added": summary.labels_added}))


def reading(path: Path, db: Path) -> None:
    """Reading the sheet into records alone, as the import reads it, with no database."""
    from annotator._util.gc_paused import paused
    from annotator.import_export.formats import ReadOptions, read

    start, cpu = time.perf_counter(), time.process_time()
    with paused():
        count = sum(len(list(part.records)) for part in read(path, options=ReadOptions(annotator="alice")))
    print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "records": count}))


def setup(path: Path, db: Path) -> None:
    from annotator.database.engine import get_engine
    from annotator.import_export.formats import read
    from annotator.import_export.importer import import_parts

    import_parts(read(path), engine=get_engine(f"sqlite:///{db}"))


def _child(mode: str, path: Path, db: Path, code: Path = ROOT) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), str(db), "--code", str(code)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also time the import of the code at this git revision")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, path, db = args.child
        sys.path.insert(0, str(args.code))  # the code under test: ours, or the copy of --against's revision
        modes = {"baseline": baseline, "floor": floor, "ours": ours, "reading": reading, "setup": setup}
        modes[mode](Path(path), Path(db))
        return
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        labelled, unlabelled = make_sheets(directory, args.labels)
        prepared = directory / "prepared.sqlite"
        _child("setup", unlabelled, prepared)
        old_code = _checkout(args.against, directory / "against") if args.against else None
        # Each code's database set up by that code: their schemas (migrations) may differ.
        prepared_by = {"ours": prepared}
        if old_code is not None:
            prepared_by["old"] = directory / "prepared-old.sqlite"
            _child("setup", unlabelled, prepared_by["old"], old_code)
        base, low, our, parts, old = [], [], [], [], []
        read_alone: dict[str, list[tuple[float, float]]] = {"ours": [], "old": []}  # (wall, CPU)
        cpu: dict[str, list[float]] = {"ours": [], "old": []}
        for i in range(args.repeat):
            base.append(_child("baseline", labelled, directory / f"base{i}.sqlite")["seconds"])
            result = _child("floor", labelled, _copy(prepared, directory / f"floor{i}.sqlite"))
            low.append(result["seconds"])
            parts.append(result["parts"])
            # Ours and --against's in turns, each first every other repeat: a load that comes and goes (a shared
            # machine) falls on both alike.
            runs = [("ours", ROOT, our), ("old", old_code, old)] if old_code is not None else [("ours", ROOT, our)]
            for name, code, times in runs[:: 1 if i % 2 == 0 else -1]:
                result = _child("ours", labelled, _copy(prepared_by[name], directory / f"{name}{i}.sqlite"), code)
                assert result["labels_added"] == args.labels, result
                times.append(result["seconds"])
                cpu[name].append(result["cpu"])
                result = _child("reading", labelled, directory / "unused.sqlite", code)
                read_alone[name].append((result["seconds"], result["cpu"]))
    b, f, o = statistics.median(base), statistics.median(low), statistics.median(our)
    parts_json = statistics.median(p["json.load"] for p in parts)
    print(f"{args.labels:,} labels onto existing candidates (median of {args.repeat})")
    print(f"  baseline (json.load + executemany)  {b:.2f} s")
    print(f"  write floor (json.load + our 3 raw executemany)  {f:.2f} s   {f / b:.2f}x")
    print("    of which " + ", ".join(f"{name} {statistics.median(p[name] for p in parts):.2f} s" for name in parts[0]))
    for name, label, times in (("ours", "our import", our), ("old", f"{args.against}'s import", old)):
        if not times:
            continue
        t = statistics.median(times)
        r_wall, r_cpu = (statistics.median(pair[k] for pair in read_alone[name]) for k in (0, 1))
        print(f"  {label:<34}  {t:.2f} s   {args.labels / t:,.0f} labels/s   ratio {t / b:.2f}x (goal <= 6x), "
              f"{t / f:.2f}x the write floor; CPU {statistics.median(cpu[name]):.2f} s")
        print(f"    reading the sheet alone {r_wall:.2f} s (CPU {r_cpu:.2f} s); the import less that: "
              f"{t - r_wall:.2f} s ({(t - r_wall) / (f - parts_json):.2f}x the floor's writes without json.load)")
    if old:
        print(f"  ours takes {o / statistics.median(old):.2f} of {args.against}'s time")


def _checkout(revision: str, directory: Path) -> Path:
    """The repository's files at `revision`, unpacked into `directory`."""
    directory.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    return directory


def _copy(prepared: Path, copy: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):  # the database and, if SQLite left them, its WAL files
        if Path(f"{prepared}{suffix}").exists():
            shutil.copy(f"{prepared}{suffix}", f"{copy}{suffix}")
    return copy


if __name__ == "__main__":
    main()
