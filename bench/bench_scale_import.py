"""Importing N candidates and 3N labels on PostgreSQL (issue 21 item 3): time and peak memory per sheet.

    python bench/bench_scale_import.py --candidates 1000000 [--server postgresql://postgres@127.0.0.1:55433]

Set-up (untimed): one annotation sheet (JSONL, the paper's Fig. 10 fields) per annotator a1, a2, a3, each with
every one of the N candidates (5 per problem, two data sources, the same texts in every sheet) and that
annotator's label (about 80% acceptable, independently); an empty database `--database` (dropped and made anew)
upgraded to head. Timed: `python -m annotator import SHEET --annotator aN` for a1, a2 then a3, each a child
process as a user runs it, its wall time and peak RSS (`os.wait4`). The first sheet adds the problems, the
candidates and a1's labels; the others find every candidate stored and add their labels. Then the row counts.
Goal: time linear in N, peak RSS the same at 100,000 and at 1,000,000.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine  # noqa: E402

SOURCES = ("bench", "benchgsm")
KINDS = [("remove", 1), ("remove", 2), ("contradict", 1), ("contradict", 2), ("remove", 3)]


def write_sheet(path: Path, candidates: int, seed: int) -> None:
    """One annotator's sheet over every candidate."""
    rng = random.Random(seed)
    problems = (candidates + 4) // 5
    half = (problems + 1) // 2
    with path.open("w", encoding="utf-8") as out:
        for index in range(candidates):
            problem = index // 5
            source, position = (SOURCES[0], problem) if problem < half else (SOURCES[1], problem - half)
            rewrite_type, k = KINDS[index % 5]
            accepted = rng.random() < 0.8
            out.write(json.dumps({
                "data_id": f"{source}_{position}_{rewrite_type}_{k}", "data_source": source,
                "question": f"Problem {position} of {source}: let $x > {position}$ and $x < {position + 2}$ be an "
                            f"integer. A shop sells {position % 17 + 3} apples each day. Find $x^2$.",
                "ground_truth": str((position + 1) ** 2),
                "rewritten_condition": f"removed $x < {position + 2}$ (variant {k})",
                "rewritten_question": f"Problem {position} of {source}: let $x > {position}$ be an integer. A shop "
                                      f"sells {position % 17 + 3} apples each day ({rewrite_type} {k}). Find $x^2$.",
                "unsolvable_reason": "Without the upper bound $x$ is not unique.",
                "human_check": int(accepted), "difficulty_eval": rng.randint(0, 1) if accepted else None,
            }, ensure_ascii=False) + "\n")


def run_import(url: str, sheet: Path, annotator: str, checkout: Path = ROOT) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, peak RSS in MB and the last line printed of one `python -m annotator import`
    run in `checkout` (whose `annotator` package `-m` finds first)."""
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": url}
    command = [sys.executable, "-m", "annotator", "import", str(sheet), "--annotator", annotator]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.stdout.read().decode() if process.stdout else ""
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"import of {sheet} failed: {output[-2000:]}")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:55433")
    parser.add_argument("--database", default="scale_import", help="dropped and made anew")
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--files", type=Path, help="where the sheets go (kept; reused when there)")
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the checkout whose code imports (A/B against another worktree); default this one")
    args = parser.parse_args()
    folder = args.files or Path(tempfile.mkdtemp(prefix="bench_scale_import_"))
    folder.mkdir(parents=True, exist_ok=True)
    sheets = []
    for number in range(1, args.annotators + 1):
        sheet = folder / f"sheet-{args.candidates}-a{number}.jsonl"
        if not sheet.exists():
            write_sheet(sheet, args.candidates, seed=number)
        sheets.append((f"a{number}", sheet))
    with psycopg.connect(f"{args.server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{args.database}"')
    url = f"{args.server.replace('postgresql://', 'postgresql+psycopg://')}/{args.database}"
    get_engine(url).dispose()  # the schema at head, outside the timed imports
    with psycopg.connect(f"{args.server}/postgres", autocommit=True) as conn:  # its slow statements in the log
        conn.execute(f'ALTER DATABASE "{args.database}" SET log_min_duration_statement = 1000')
    load_before = " ".join(f"{value:.2f}" for value in os.getloadavg())
    total = 0.0
    print(f"{args.candidates:,} candidates, {args.annotators} sheets ({sheets[0][1].stat().st_size / 1e6:.0f} MB "
          f"each), PostgreSQL {args.database}", flush=True)
    for annotator, sheet in sheets:
        wall, cpu, rss, line = run_import(url, sheet, annotator, args.checkout)
        total += wall
        print(f"  import --annotator {annotator}: {wall:.1f} s (its CPU {cpu:.1f} s), peak RSS {rss} MB; {line}",
              flush=True)
    with psycopg.connect(f"{args.server}/{args.database}") as conn:
        counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
                  for table in ("problem", "candidate", "annotation", "annotationevent")}
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"total {total:.1f} s; rows: " + ", ".join(f"{table} {count:,}" for table, count in counts.items())
          + f"; load average before {load_before}, after {load_after}")


if __name__ == "__main__":
    main()
