"""The transcript pages (Report, Review) on a big database, e.g. a copy of the 1M scale data set
(/work/notes/scale-ready.md): each page's core functions, then the page under AppTest as the data set's reviewer.

    python bench/bench_transcript_pages.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY [--repeat 3]

Core, timed one by one (median of --repeat): the Report's figures as the page computes them (`counting.read`, the
three breakdowns from one bootstrap, the most-disagreed items, the rule sets' disagreements, the tags per model),
the freshness fingerprint the page reads on every look, Review's queue opened and walked 200 transcripts on, its
filter lists. Pages (the page script's own run under AppTest): Report cold (its snapshots cleared: the first open
after the server starts) and warm, Review opened. Reads only; the user `rev` (reviewer) must exist, as in the
scale data set.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from sqlalchemy import select  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from annotator import transcripts  # noqa: E402
from annotator.accounts import auth  # noqa: E402
from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.database.models import Annotator  # noqa: E402
from annotator.figures import fingerprints  # noqa: E402
from annotator.transcripts.report import counting  # noqa: E402
from annotator.transcripts.report import disagreed as where  # noqa: E402
from annotator.transcripts.report import scores as reporting  # noqa: E402
from tests.support.candidates import sign_in_app  # noqa: E402


def timed(work: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def core(engine: Any, repeat: int) -> None:
    def session_of(work: Callable[[Any], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with read_session(engine) as session:
                return work(session)
        return run

    def figures(session: Any) -> None:
        counts = counting.read(session)
        reporting.reports(session, breakdowns=[["data_source"], ["rewrite_type"], ["difficulty_eval"]],
                          groups=counts)
        where.disagreed_items(session, groups=counts)

    def walk(session: Any) -> None:
        queue = transcripts.ReviewQueue.open(session, seed=5)
        for position in range(200):
            queue.id_at(session, position)

    steps = {
        "Report: counting.read": lambda s: counting.read(s),
        "Report: figures (read, 3 breakdowns, disagreed)": figures,
        "Report: rules_disagree": reporting.rules_disagree,
        "Report: tag_counts": transcripts.tag_counts,
        "Report: transcripts_version (every look)": fingerprints.transcripts_version,
        "Review: queue opened": lambda s: transcripts.ReviewQueue.open(s, seed=5),
        "Review: queue opened, model filter": lambda s: transcripts.ReviewQueue.open(s, seed=5, model="model-1"),
        "Review: queue walked 200 on": walk,
        "Review: review_options": transcripts.review_options,
    }
    for name, work in steps.items():
        print(f"  {name:50s} {timed(session_of(work), repeat):7.3f} s", flush=True)


# The page run inside a script that times it: the page's own server time, without AppTest's start-up around it
# (its scan of the installed packages for components alone takes 0.5-1.8 s here).
TIMED = """
import runpy, time
import streamlit as st
_start = time.perf_counter()
try:
    runpy.run_path({page!r}, run_name="__main__")
finally:
    st.session_state["bench_seconds"] = time.perf_counter() - _start
"""


def render(page: str, engine: Any, user: auth.User, state: dict[str, Any] | None = None) -> float:
    """Seconds of the page's own script run (AppTest, signed in as `user`)."""
    app = AppTest.from_string(TIMED.format(page=str(ROOT / "app_pages" / page)), default_timeout=600)
    sign_in_app(app, engine, user)
    for key, value in (state or {}).items():
        app.session_state[key] = value
    app.run()
    assert not app.exception, app.exception
    return float(app.session_state["bench_seconds"])


def pages(engine: Any, repeat: int) -> None:
    with read_session(engine) as session:
        row = session.execute(select(Annotator).where(Annotator.name == "rev")).scalar_one()
        user = auth.User(id=row.id, name=row.name, role=row.role)
    render("report.py", engine, user)  # imports and Streamlit's first-run costs, not the page's
    cold, warm, review = [], [], []
    for _ in range(repeat):
        st.cache_resource.clear()
        cold.append(render("report.py", engine, user))
        warm.append(render("report.py", engine, user))
        review.append(render("review.py", engine, user, {"review_ready": True}))
    print(f"  Report page, cold (first open after start)          {statistics.median(cold):7.3f} s")
    print(f"  Report page, warm                                   {statistics.median(warm):7.3f} s")
    print(f"  Review page, opened                                 {statistics.median(review):7.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--core-only", action="store_true")
    args = parser.parse_args()
    engine = get_engine(args.url)
    print(f"median of {args.repeat}")
    core(engine, args.repeat)
    if not args.core_only:
        pages(engine, args.repeat)


if __name__ == "__main__":
    main()
