"""What fresh figures cost (issue 18, item 3): the fingerprint a look at Team or Report reads every time (and
the open page every 2 s), against the computation it saves.

    python bench/bench_freshness.py [--candidates 100000] [--transcripts 100000] [--repeat 20]

A real SQLite file: N candidates x 3 labels among 12 annotators (bench_agreement's seed) and M transcripts of
7 models x 2 prompts (bench_report_page's). Timed, median of `repeat`: `fingerprints.labels_version`,
`fingerprints.transcripts_version`; once each (they take seconds): the Team page's figures and the Report page's
counts, i.e. what a look waits for (up to the snapshot's patience) when the fingerprint moved.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.figures import fingerprints  # noqa: E402
from annotator.figures.agreement import label_agreement  # noqa: E402
from annotator.labelling import gold, labels  # noqa: E402
from annotator.transcripts.report import counting  # noqa: E402
from annotator.transcripts.report import scores as reporting  # noqa: E402
from bench import bench_agreement, bench_report_page  # noqa: E402


def timed(work: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--transcripts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'fresh.sqlite'}"
        bench_agreement.seed(url, args.candidates, 12)
        bench_report_page.seed(url, args.transcripts)
        engine = get_engine(url)

        def version(of: Callable[[Any], Any]) -> Callable[[], Any]:
            def run() -> Any:
                with read_session(engine) as session:
                    return of(session)
            return run

        def team() -> None:
            with read_session(engine) as session:
                rows, _, accuracy = labels.label_rows(session), labels.activity(session), gold.gold_accuracy(session)
            label_agreement(rows, gold={name: p["gold_accuracy"] for name, p in accuracy.items()})

        def report() -> None:
            with read_session(engine) as session:
                groups = counting.read(session)
                reporting.report(session, by=["data_source"], groups=groups)
                reporting.report(session, by=["difficulty_eval"], groups=groups)

        print(f"{args.candidates:,} candidates x 3 labels, {args.transcripts:,} transcripts")
        print(f"labels_version       {timed(version(fingerprints.labels_version), args.repeat) * 1000:8.1f} ms")
        print(f"transcripts_version  {timed(version(fingerprints.transcripts_version), args.repeat) * 1000:8.1f} ms")
        print(f"Team figures         {timed(team, 1):8.2f} s")
        print(f"Report counts        {timed(report, 1):8.2f} s")


if __name__ == "__main__":
    main()
