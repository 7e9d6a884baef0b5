"""The Adjudicate page's work per key: finding the next dispute, over N candidates with 3 labels each.

    python bench/bench_adjudicate.py [--candidates 100000] [--keys 200]

Set-up (untimed): `bench_agreement`'s candidates and labels (3 random annotators of 12 per candidate, about 80%
human_check = 1, so most candidates are disputes), resolved labels stored. Timed on a real SQLite file:
- one aggregate over every label, lowest agreement first (`disputes(limit=1)`): what the page ran twice per
  key before `DisputeQueue` (the next dispute and the count left), and what the queue now runs once, on open;
- one key with `DisputeQueue`: adjudicate the current dispute, then `next` (the next id, checked again).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_agreement import seed  # noqa: E402

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Annotator, Candidate  # noqa: E402
from annotator.labelling import adjudication  # noqa: E402
from tests.support.candidates import store_resolved_labels  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'adjudicate.sqlite'}"
        seed(url, args.candidates, 12)
        engine = get_engine(url)
        with write_session(engine) as session:
            store_resolved_labels(session, list(session.execute(select(Candidate.id)).scalars()))
            reviewer = session.execute(select(Annotator.id).limit(1)).scalar_one()
        aggregate = []
        for _ in range(5):
            with read_session(engine) as session:
                start = time.perf_counter()
                adjudication.disputes(session, limit=1)
                aggregate.append(time.perf_counter() - start)
        disputes = adjudication.DisputeQueue()
        with read_session(engine) as session:
            start = time.perf_counter()
            current = disputes.next(session)
            first = time.perf_counter() - start
        keys = []
        for _ in range(args.keys):
            start = time.perf_counter()
            with write_session(engine) as session:
                adjudication.adjudicate(session, candidate_id=current, reviewer_id=reviewer, human_check=1,
                                        difficulty_eval=0)
                current = disputes.next(session)
            keys.append(time.perf_counter() - start)
    one = statistics.median(aggregate)
    key = statistics.median(keys)
    print(f"{args.candidates:,} candidates x 3 labels, {len(disputes) + args.keys + 1:,} disputes")
    print(f"  one aggregate over every label (median of 5)       {one * 1000:8.1f} ms")
    print(f"  before: two aggregates per key                     {2 * one * 1000:8.1f} ms")
    print(f"  DisputeQueue: first next (the read, on open)       {first * 1000:8.1f} ms")
    print(f"  DisputeQueue: one key, adjudicate + next (median of {args.keys}) {key * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
