"""The Overview's shared figures (`figures.OVERVIEW`) on a big database (issue 21 item 3): the background
computation, a look at stored figures, the fingerprint read on every look, and a look right after a label is
saved (stale: it waits up to the page's patience for new figures, then shows the last ones).

    python bench/bench_overview_snapshot.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY

Writes labels as `ann` (the scale data set's annotator with no labels): run it on a copy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select  # noqa: E402

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Annotator, Candidate  # noqa: E402
from annotator.figures import fingerprints  # noqa: E402
from annotator.figures.pages import OVERVIEW  # noqa: E402
from annotator.figures.snapshots import Snapshot  # noqa: E402
from annotator.labelling import labels

PATIENCE = 0.4  # app_pages/overview.py's PATIENCE_SECONDS


def _timed(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def _label(engine: Any, n: int) -> None:
    """`ann` labels the last candidate, or changes her label on it (human_check alternating with `n`)."""
    with write_session(engine) as session:
        ann = session.execute(select(Annotator.id).where(Annotator.name == "ann")).scalar_one()
        candidate = session.execute(select(Candidate.id).order_by(Candidate.id.desc()).limit(1)).scalar()
        labels.record_label(session, candidate_id=candidate, annotator_id=ann, human_check=n % 2,
                            difficulty_eval=None if n % 2 == 0 else 0, seconds_spent=5.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    engine = get_engine(args.url)
    snapshot = Snapshot(engine, OVERVIEW, ttl=30, patience=PATIENCE)
    snapshot.get()
    seconds = [_timed(snapshot.refresh)[0] for _ in range(args.repeat)]
    print(f"  computation (background), median          {statistics.median(seconds) * 1000:8.1f} ms")
    seconds = [_timed(snapshot.get)[0] for _ in range(5)]
    print(f"  look at stored figures, median of 5       {statistics.median(seconds) * 1000:8.1f} ms")
    with read_session(engine) as session:
        seconds = [_timed(lambda: fingerprints.overview_version(session))[0] for _ in range(5)]
    print(f"  overview_version (every look), median     {statistics.median(seconds) * 1000:8.1f} ms")
    stale, after = [], []
    generation = snapshot.get().generation
    for n in range(1, args.repeat + 1):
        _label(engine, n)
        elapsed, reading = _timed(snapshot.get)
        # Stale: being recomputed, or (figures quick to compute, as on a small database) already the new ones.
        assert reading.refreshing or reading.generation > generation, "a label saved: the figures are stale"
        stale.append(elapsed)
        snapshot.wait()
        elapsed, reading = _timed(snapshot.get)
        after.append(elapsed)
        generation = reading.generation
    print(f"  look right after a label, median          {statistics.median(stale) * 1000:8.1f} ms")
    print(f"  next look once stored, median             {statistics.median(after) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
