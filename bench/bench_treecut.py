"""TreeCut generator benchmark: generate AND exactly check pairs, written as TreeCut JSONL, in problems/s.

    python bench/bench_treecut.py [--count 5000] [--repeat 3]

For numVars 4, 10 and 20 (ansDepth 2, 8, 16; cutDepth = ansDepth // 2) it measures, in the same run:
- `checked`: generate pairs, parse both problems back and decide them exactly, write both JSONL files;
- `unchecked`: the same without the check (the baseline: what the reference generator does).
Each pair is two problems (answerable + unanswerable). The reference pure-Python generator writes about
7,000 unanswerable problems/s at numVars 10, ansDepth 8 on this machine (issue 5); it is not available
here, so the figure to compare with is that number against `unanswerable/s` of the checked run.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotator.construction import treecut  # noqa: E402

SETTINGS = ((4, 2), (10, 8), (20, 16))
REFERENCE_UNANSWERABLE_PER_SECOND = 7000


def run(params: treecut.Params, *, count: int, check: bool, out: Path) -> float:
    started = time.perf_counter()
    pairs = list(treecut.generate_pairs(params, count=count, seed=1, check=check))
    treecut.write_pairs(pairs, params, out)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="pairs per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting (the median is reported)")
    args = parser.parse_args()
    print(
        f"python {platform.python_version()} on {platform.machine()}, {platform.processor() or 'cpu?'}; "
        f"{args.count} pairs per run, median of {args.repeat}"
    )
    print(f"{'numVars':>7} {'ansDepth':>8} {'mode':>9} {'pairs/s':>9} {'problems/s':>11} {'unanswerable/s':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        for num_vars, ans_depth in SETTINGS:
            params = treecut.Params(num_vars=num_vars, ans_depth=ans_depth, cut_depth=ans_depth // 2)
            rates = {}
            for check in (False, True):
                # Interleave nothing else; both modes in the same process, one after the other.
                times = [run(params, count=args.count, check=check, out=Path(tmp)) for _ in range(args.repeat)]
                rates[check] = args.count / statistics.median(times)
                mode = "checked" if check else "unchecked"
                print(
                    f"{num_vars:>7} {ans_depth:>8} {mode:>9} {rates[check]:>9.0f} {2 * rates[check]:>11.0f} "
                    f"{rates[check]:>15.0f}"
                )
            print(f"{'':>17} check costs {rates[False] / rates[True]:.2f}x the unchecked time")
            if (num_vars, ans_depth) == (10, 8):
                print(
                    f"{'':>17} reference: ~{REFERENCE_UNANSWERABLE_PER_SECOND} unanswerable/s unchecked -> "
                    f"checked pairs reach {rates[True] / REFERENCE_UNANSWERABLE_PER_SECOND:.2f}x of it "
                    f"({2 * rates[True] / REFERENCE_UNANSWERABLE_PER_SECOND:.2f}x counting both problems)"
                )


if __name__ == "__main__":
    main()
