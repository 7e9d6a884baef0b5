"""A second app server's first open of Team or Report (issue 21, item 2): before, every server process computed the
figures itself on its first open (a snapshot in its own memory); now the first server stores them in the
database and every other server (and a restarted one) reads them.

    python bench/bench_shared_figures.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY [--figures team]

Run it on a copy of the 1M data set (see /work/notes/scale-ready.md), never on the template. Per figures kind:
their stored row is deleted (nothing stored, as on a fresh database), then timed, each with its own engine (its
own connections, as another process has):
- server A's first open: computes the figures and stores them (what every server's first open cost before);
- server B's first open: reads the stored figures (the fingerprint, the row, the JSON);
- a look at fresh figures (every open after the first, and the open page's tick every 2 s), median of 5;
- a look at stale figures (older than the pages' 30 s, or labels saved since), with the page's patience: it
  starts the recomputation and waits up to the patience for it (then the recomputation is waited for, untimed);
and the size of the stored JSON.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import delete, func, select, update  # noqa: E402

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import FigureSnapshot  # noqa: E402
from annotator.figures import pages as figures  # noqa: E402
from annotator.figures.snapshots import Snapshot  # noqa: E402

KINDS = {kind.key: kind for kind in (figures.TEAM, figures.OVERVIEW, figures.REPORT, figures.JUDGES)}
# Each page's patience for a stale look (app_pages: Overview's PATIENCE_SECONDS; Team and Report the default).
PATIENCE = {"team": 3.0, "overview": 0.4, "report": 3.0, "report_judges": 3.0}


def server(url: str, kind: figures.Figures) -> Snapshot:
    """A Snapshot as another app process has it: its own engine, nothing read yet."""
    return Snapshot(get_engine.__wrapped__(url), kind, ttl=3600)


def timed_get(snapshot: Snapshot) -> float:
    start = time.perf_counter()
    snapshot.get()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--figures", default="team", help="comma-separated: team, overview, report, report_judges")
    args = parser.parse_args()
    engine = get_engine(args.url)
    for key in args.figures.split(","):
        kind = KINDS[key]
        with write_session(engine) as session:
            session.execute(delete(FigureSnapshot).where(FigureSnapshot.key == key))
        first = timed_get(server(args.url, kind))
        second = server(args.url, kind)
        second_open = timed_get(second)
        looks = [timed_get(second) for _ in range(5)]
        with write_session(engine) as session:  # computed an hour ago: stale
            session.execute(update(FigureSnapshot).where(FigureSnapshot.key == key)
                            .values(computed_at=FigureSnapshot.computed_at - timedelta(hours=1)))
        third = Snapshot(get_engine.__wrapped__(args.url), kind, ttl=30, patience=PATIENCE[key])
        stale = timed_get(third)
        third.wait()
        with read_session(engine) as session:
            size = session.execute(select(func.length(FigureSnapshot.value)).where(FigureSnapshot.key == key)).scalar()
        print(f"{key}: server A's first open (computes and stores) {first:.2f} s; server B's first open (reads the "
              f"stored figures) {second_open:.3f} s; a look at fresh figures {statistics.median(looks):.3f} s; "
              f"a look at stale figures (patience {PATIENCE[key]} s) {stale:.2f} s; stored JSON {size:,} characters")


if __name__ == "__main__":
    main()
