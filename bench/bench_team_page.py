"""The Team page over N candidates with 3 labels each (AppTest, a real SQLite file, a reviewer signed in).

    python bench/bench_team_page.py [--candidates 100000] [--repeat 5]

Timed: the first render (the snapshot computed in the page: reading the labels, every agreement coefficient,
per-day activity, gold accuracy) and later renders, which serve the latest snapshot (`annotator.figures.snapshots`) and,
when it is older than the page's time to live, start its recomputation in the background. Goal: under 1 s.

AppTest itself costs seconds a run on this machine (it scans every installed package for components), so the
same run also renders a one-line page (the floor) and the page's own time is its render minus the floor's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from annotator.database.engine import get_engine  # noqa: E402
from bench.bench_agreement import seed  # noqa: E402
from tests.support.candidates import add_user, sign_in_app  # noqa: E402

PAGE = str(ROOT / "app_pages" / "team.py")


def render(engine: object, user: object, page: str = PAGE) -> float:
    app = AppTest.from_file(page, default_timeout=600)
    sign_in_app(app, engine, user)
    start = time.perf_counter()
    app.run()
    elapsed = time.perf_counter() - start
    assert not app.exception, app.exception
    assert page != PAGE or app.dataframe, "the people table is missing"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'team.sqlite'}"
        seed(url, args.candidates, 12)
        engine = get_engine(url)
        user = add_user(engine, "rev", role="reviewer")
        floor_page = Path(tmp) / "floor.py"
        floor_page.write_text('import streamlit as st\nst.write("floor")\n')
        first = render(engine, user)
        later, floor = [], []
        for _ in range(args.repeat):  # interleaved, so that the machine's load falls on both alike
            later.append(render(engine, user))
            floor.append(render(engine, user, str(floor_page)))
    page_alone = [a - b for a, b in zip(later, floor)]
    print(f"Team page, {args.candidates:,} candidates x 3 labels; medians of {args.repeat}")
    print(f"  first render after the server starts (computes the snapshot): {first:.2f} s")
    print(f"  later renders: {statistics.median(later):.2f} s; a one-line page (AppTest's own cost): "
          f"{statistics.median(floor):.2f} s")
    print(f"  the page's own time (later render minus floor): {statistics.median(page_alone):.3f} s (goal < 1 s)")


if __name__ == "__main__":
    main()
