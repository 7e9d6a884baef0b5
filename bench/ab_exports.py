"""A/B of the table exports (candidates as JSONL / CSV / Parquet, labels with history in each) between two
checkouts, on one database, alternating which goes first; each export in a fresh process, timed inside it.

    python bench/ab_exports.py --base /work/main [--candidates 50000] [--repeat 5] [--cases jsonl "labels csv"]

The database: N candidates (10 per problem) imported from an annotation sheet with one label each. Also
compares the files each side wrote (manifests aside) and says which differ.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import json, sys, time
from pathlib import Path
from annotator.database.engine import get_engine
from annotator.import_export.exports import export
engine = get_engine(f"sqlite:///{sys.argv[3]}")
start = time.perf_counter()
export(sys.argv[1], Path(sys.argv[2]), engine=engine, options=json.loads(sys.argv[4]))
print(time.perf_counter() - start)
"""
CASES = [("jsonl", {}), ("csv", {}), ("parquet", {}), ("labels", {"with_history": True}),
         ("labels", {"file_format": "csv", "with_history": True}),
         ("labels", {"file_format": "parquet", "with_history": True})]


def _case(format: str, options: dict[str, object]) -> str:
    return f"{format} {options.get('file_format', '')}".strip()


def make_database(database: Path, n: int) -> None:
    sheet = database.with_name("sheet.jsonl")
    with sheet.open("w", encoding="utf-8") as handle:
        for i in range(n):
            problem, k = divmod(i, 10)
            handle.write(json.dumps({
                "unsol_id": f"bench_{problem}_{'remove' if k % 2 == 0 else 'contradict'}_{k // 2 + 1}",
                "data_source": "bench", "question": f"Problem {problem}: a train leaves at $t_0 = {problem}$. " * 2,
                "ground_truth": str(problem * 3), "rewritten_condition": f"The speed $v = {k + 3}$ was removed.",
                "rewritten_question": f"Candidate {i}: how far has it gone? =SUM" * 2,
                "unsolvable_reason": "Without the speed it cannot be determined." * 2,
                "human_check": i % 2, "difficulty_eval": (i // 2) % 2 if i % 2 else None,
            }) + "\n")
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": f"sqlite:///{database}"}
    subprocess.run([sys.executable, "-m", "annotator", "import", str(sheet), "--annotator", "alice"], cwd=ROOT,
                   env=env, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="The other checkout (A); this one is B.")
    parser.add_argument("--candidates", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cases", nargs="+", choices=[_case(*case) for case in CASES],
                        help="only these exports (default: all)")
    arguments = parser.parse_args()
    cases = [case for case in CASES if not arguments.cases or _case(*case) in arguments.cases]
    sides = {"A": arguments.base.resolve(), "B": ROOT}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        database = work / "ab.sqlite"
        make_database(database, arguments.candidates)
        times: dict[tuple[str, str], list[float]] = {}
        for rep in range(arguments.repeat):
            for format, options in cases:
                case = _case(format, options)
                for side in ("A", "B") if rep % 2 == 0 else ("B", "A"):
                    out = work / side / case.replace(" ", "-")
                    result = subprocess.run(
                        [sys.executable, "-c", CHILD, format, str(out), str(database), json.dumps(options)],
                        cwd=sides[side], env={**os.environ, "PYTHONPATH": str(sides[side])}, capture_output=True,
                        text=True, check=True)
                    times.setdefault((case, side), []).append(float(result.stdout.split()[-1]))
        for case in dict.fromkeys(case for case, _side in times):
            a, b = times[(case, "A")], times[(case, "B")]
            ratio = statistics.median(b) / statistics.median(a)
            print(f"{case:16} A median {statistics.median(a):.3f} s min {min(a):.3f} s | B median "
                  f"{statistics.median(b):.3f} s min {min(b):.3f} s | B/A median {ratio:.2f}")
        differing = [str(path.relative_to(work / "A")) for path in sorted((work / "A").rglob("*"))
                     if path.is_file() and path.name != "manifest.json"
                     and not filecmp.cmp(path, work / "B" / path.relative_to(work / "A"), shallow=False)]
        print("files that differ:", ", ".join(differing) or "none")


if __name__ == "__main__":
    main()
