"""TreeCut generation, this checkout against another version, alternated in one session (checked pairs/s).

    mkdir -p /tmp/old && git archive REV annotator | tar -x -C /tmp/old
    python bench/ab_treecut_versions.py --old /tmp/old --rounds 5

Each round runs the old and the new package in fresh processes (1,000 checked pairs at numVars 10, ansDepth 8,
median of 5 runs each, CPU time of the process) and prints both rates and their ratio: on a shared machine
only same-round ratios mean anything.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
from annotator.construction import treecut
params = treecut.Params(num_vars=10, ans_depth=8, cut_depth=4)
runs = []
for _ in range(5):
    started = time.process_time()
    sum(1 for _ in treecut.generate_pairs(params, count=1000, seed=1))
    runs.append(time.process_time() - started)
print(1000 / statistics.median(runs))
"""


def rate(package_root: Path) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, str(package_root)], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="a directory holding the other `annotator` package")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for round_ in range(1, args.rounds + 1):
        old, new = rate(args.old), rate(ROOT)
        print(f"round {round_}: old {old:,.0f} pairs/s, new {new:,.0f} pairs/s, new/old {new / old:.2f}")


if __name__ == "__main__":
    main()
