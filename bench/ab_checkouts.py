"""A/B of one bench script (or CLI command) between two checkouts, interleaved in one session: each round runs
both sides in fresh processes, in the order A B then B A (ABBA), each with its own checkout as working directory
and PYTHONPATH (so each side runs its own code and its own copy of the script). Bytecode is cached as a user's
Python caches it (in a scratch PYTHONPYCACHEPREFIX, whatever PYTHONDONTWRITEBYTECODE says), after an untimed
warm-up run of each side.

    python bench/ab_checkouts.py --before /work/wt-old --after . --rounds 3 -- -m annotator --help
    python bench/ab_checkouts.py --before /work/wt-old --after . --rounds 3 \\
        --figure 'pairs/s=10 +8 +checked +([\\d,.]+)' -- bench/bench_treecut.py --count 500 --repeat 1

The command after `--` is passed to this Python interpreter. Figures: the wall time of each run, and each
`--figure NAME=REGEX` (its first group, a number; commas ignored) read from the run's output. Prints per figure
the median of each side and after/before; on a shared machine only such interleaved ratios mean anything.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WALL = "wall s"


def parse_figure(text: str) -> tuple[str, re.Pattern[str]]:
    name, sep, pattern = text.partition("=")
    if not sep or not name or not pattern:
        raise argparse.ArgumentTypeError(f"a figure is NAME=REGEX, not {text!r}")
    compiled = re.compile(pattern)
    if compiled.groups < 1:
        raise argparse.ArgumentTypeError(f"{name}: the regular expression needs a group around the number")
    return name, compiled


def run(checkout: Path, command: list[str], figures: list[tuple[str, re.Pattern[str]]],
        pycache: Path) -> dict[str, float]:
    """One run of `command` in `checkout`: its wall time and its figures."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, *command], cwd=checkout, capture_output=True, text=True,
                            env={**env, "PYTHONPATH": str(checkout), "PYTHONPYCACHEPREFIX": str(pycache)})
    values = {WALL: time.perf_counter() - start}
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} in {checkout} exited {result.returncode}:\n{result.stderr[-3000:]}")
    output = result.stdout + result.stderr
    for name, pattern in figures:
        found = pattern.search(output)
        if not found:
            sys.exit(f"figure {name!r} ({pattern.pattern}) not in the output in {checkout}:\n{output[-3000:]}")
        values[name] = float(found.group(1).replace(",", ""))
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout A")
    parser.add_argument("--after", type=Path, required=True, help="checkout B")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each side first")
    parser.add_argument("--figure", type=parse_figure, action="append", default=[], metavar="NAME=REGEX")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="after `--`: the arguments to python")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after `--`, e.g. `-- -m annotator --help`")
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    values: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    with tempfile.TemporaryDirectory(prefix="ab-pycache-") as pycache:
        for _ in range(args.warmup):
            for side in sides:
                run(sides[side], command, args.figure, Path(pycache))
        for round_ in range(args.rounds):
            for side in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                for name, value in run(sides[side], command, args.figure, Path(pycache)).items():
                    values[side].setdefault(name, []).append(value)
    load = os.getloadavg()
    print(f"python {' '.join(command)}: {args.rounds} rounds, ABBA, after {args.warmup} warm-up; "
          f"load {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}")
    print(f"{'figure':32} {'before':>10} {'after':>10} {'after/before':>13}")
    for name in values["before"]:
        before, after = statistics.median(values["before"][name]), statistics.median(values["after"][name])
        ratio = after / before if before else float("nan")
        print(f"{name:32} {before:10.3f} {after:10.3f} {ratio:13.2f}")


if __name__ == "__main__":
    main()
