"""Edge answers against every item of the release: `python -m annotator import` of one response per (item, edge
answer), timed, with how many (ground truth, answer) pairs the judge left undecided.

    python bench/bench_edge_answers.py [--all] [--items N]

Set-up (untimed): the ReliableMath release imported into a real SQLite file; one JSONL with, for every item, one
response per edge answer (`tests/support/edge_answers.py`: `ATTACK_ANSWERS`, the kinds an attacker's file held:
NaN, complex infinity, indeterminate forms, exponent towers, a 5,000-digit number, deep braces, 1,000-term sums,
Unicode digits; `--all`: every one of `EDGE_ANSWERS`). Timed: the import as a user runs it, a fresh process.
Goal: under 300 s on 2 cores, every response stored with a verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.database.models import Transcript  # noqa: E402
from annotator.import_export.formats import read  # noqa: E402
from annotator.import_export.importer import import_parts  # noqa: E402
from annotator.transcripts import evaluation_items  # noqa: E402
from tests.support.edge_answers import ATTACK_ANSWERS, EDGE_ANSWERS  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "reliablemath"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--all", action="store_true", help="every edge answer, not only the attack's kinds")
    parser.add_argument("--items", type=int, default=None, help="only the release's first N items (default: all)")
    args = parser.parse_args()
    answers = EDGE_ANSWERS if args.all else ATTACK_ANSWERS
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "release.sqlite"
        url = f"sqlite:///{database}"
        import_parts(read(SHARED), engine=get_engine(url))
        with read_session(get_engine(url)) as session:
            items = list(evaluation_items(session))[: args.items]
        get_engine(url).dispose()
        path = Path(tmp) / "edge.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for item in items:
                for number, answer in enumerate(answers):
                    out.write(json.dumps({"data_id": item.data_id, "model": f"edge-{number:02d}", "prompt": "standard",
                                          "response": f"Therefore the answer is $\\boxed{{{answer}}}$."}) + "\n")
        responses = len(items) * len(answers)
        print(f"{responses:,} responses ({len(answers)} edge answers x {len(items):,} items), "
              f"{path.stat().st_size / 2**20:.1f} MiB; load before: {os.getloadavg()}")
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "annotator", "import", str(path)], cwd=ROOT, text=True,
                              capture_output=True, env={**env, "ANNOTATOR_DATABASE_URL": url})
        seconds = time.perf_counter() - start
        print(f"  `import`: exit {done.returncode} in {seconds:.1f} s = {responses / seconds:,.0f} responses/s: "
              f"{(done.stdout.strip() or done.stderr.strip())[-400:]}")
        with read_session(get_engine(url)) as session:
            stored = Counter(session.execute(select(Transcript.judge)).scalars())
        print(f"  stored verdicts: {dict(stored)}")
    print(f"  machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}, load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
