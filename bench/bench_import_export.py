"""Import and export of N candidates from JSONL, against baselines measured in the same run.

    python bench/bench_import_export.py [--candidates 100000] [--repeat 3]

Baselines: import = parse the file with `json` and insert the rows with one raw `executemany` into SQLite;
export = `json.dumps` of the same records (the exported rows, held in memory), written to a file.
Each measurement runs in a fresh subprocess, so its peak RSS is its own, and times only the operation
(not interpreter start-up, imports or schema creation). Peak memory at N/2 and at N shows whether memory
grows with the file.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PER_PROBLEM = 10
FIELDS = (
    "data_id",
    "data_source",
    "question",
    "ground_truth",
    "rewritten_question",
    "rewritten_condition",
    "unsolvable_reason",
)


def make_file(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            problem, k = divmod(i, PER_PROBLEM)
            kind = "remove" if k % 2 == 0 else "contradict"
            row = {
                "data_id": f"bench_{problem}_{kind}_{k // 2 + 1}",
                "data_source": "bench",
                "question": f"Problem {problem}: a train leaves at $t_0 = {problem}$ and travels at "
                f"$v = {k + 3}$ km/h. How far has it gone after $3$ hours?" * 2,
                "ground_truth": str(problem * 3),
                "rewritten_question": f"Candidate {i}: a train leaves and travels for $3$ hours. How far has it gone?"
                * 2,
                "rewritten_condition": f"The speed $v = {k + 3}$ km/h was removed.",
                "unsolvable_reason": "Without the speed the distance cannot be determined." * 2,
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def baseline_import(path: Path, db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute(f"CREATE TABLE candidate (id INTEGER PRIMARY KEY, {', '.join(FIELDS)})")
    conn.commit()
    start = time.perf_counter()
    with path.open(encoding="utf-8") as handle:
        rows = [tuple(json.loads(line)[f] for f in FIELDS) for line in handle]
    conn.executemany(f"INSERT INTO candidate ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))})", rows)
    conn.commit()
    print(json.dumps({"inner_seconds": time.perf_counter() - start}))
    conn.close()


def our_import(path: Path, db: Path) -> None:
    from annotator.database.engine import get_engine
    from annotator.import_export.formats import read
    from annotator.import_export.importer import import_parts

    engine = get_engine(f"sqlite:///{db}")
    start = time.perf_counter()
    summary = import_parts(read(path), engine=engine)
    print(json.dumps({"inner_seconds": time.perf_counter() - start}))
    assert summary.candidates_added > 0


def baseline_export(exported: Path, out: Path) -> None:
    with exported.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    # Like our export, the baseline writes what it serialised to a file.
    start = time.perf_counter()
    (out / "baseline.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({"inner_seconds": time.perf_counter() - start}))


def our_export(db: Path, out: Path) -> None:
    from annotator.database.engine import get_engine
    from annotator.import_export.exports import export

    engine = get_engine(f"sqlite:///{db}")
    start = time.perf_counter()
    export("jsonl", out, engine=engine)
    print(json.dumps({"inner_seconds": time.perf_counter() - start}))


def child(task: str, args: list[str]) -> None:
    start = time.perf_counter()
    {"baseline_import": baseline_import, "our_import": our_import, "our_export": our_export}.get(task, baseline_export)(
        *map(Path, args)
    )
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "peak_mb": peak_mb}))


def run(task: str, *args: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, __file__, "--child", task, *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    merged: dict[str, float] = {}
    for line in result.stdout.strip().splitlines():
        merged.update(json.loads(line))
    # Time the operation itself; interpreter start-up, imports and schema creation are not part of it.
    merged["seconds"] = merged.pop("inner_seconds")
    return merged


def measure(n: int, repeat: int, work: Path) -> dict[str, dict[str, float]]:
    data = work / f"candidates_{n}.jsonl"
    make_file(data, n)
    samples: dict[str, list[dict[str, float]]] = {
        "baseline_import": [],
        "our_import": [],
        "baseline_export": [],
        "our_export": [],
    }
    for r in range(repeat):
        # Interleave ours and the baseline so machine noise hits both alike.
        for name in ("baseline_import", "our_import"):
            db = work / f"{name}_{n}_{r}.sqlite"
            samples[name].append(run(name, data, db))
        out = work / f"out_{n}_{r}"
        out.mkdir()
        samples["our_export"].append(run("our_export", work / f"our_import_{n}_{r}.sqlite", out))
        baseline = run("baseline_export", out / "candidates.jsonl", out)
        samples["baseline_export"].append(baseline)
        exported = sum(1 for _ in (out / "candidates.jsonl").open(encoding="utf-8"))
        assert exported == n, (exported, n)
        for file in work.glob(f"*_{n}_{r}.sqlite*"):
            file.unlink()
    return {
        name: {
            "median_s": statistics.median(s["seconds"] for s in runs),
            "peak_mb": max(s["peak_mb"] for s in runs),
        }
        for name, runs in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        work = Path(tmp)
        results = {n: measure(n, args.repeat, work) for n in (args.candidates // 2, args.candidates)}
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
    for n, r in results.items():
        imp = r["our_import"]["median_s"] / r["baseline_import"]["median_s"]
        exp = r["our_export"]["median_s"] / r["baseline_export"]["median_s"]
        print(f"\n{n:,} candidates (median of {args.repeat})")
        for name, v in r.items():
            print(f"  {name:16s} {v['median_s']:7.2f} s   peak RSS {v['peak_mb']:6.0f} MB")
        print(f"  import ratio {imp:.2f}x (goal <= 3x)   export ratio {exp:.2f}x (goal <= 2x)")
    half, full = results.values()
    growth = full["our_import"]["peak_mb"] / half["our_import"]["peak_mb"]
    print(
        f"\npeak RSS of our import at {args.candidates:,} vs {args.candidates // 2:,}: {growth:.2f}x "
        f"(export {full['our_export']['peak_mb'] / half['our_export']['peak_mb']:.2f}x); 1.00x = no growth"
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
    else:
        main()
