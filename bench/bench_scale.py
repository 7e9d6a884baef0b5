"""Every page's server time per render on the scale data set: goal under 0.5 s.

    createdb -h 127.0.0.1 -p 55433 -U postgres -T scale_template scale_bench
    python bench/bench_scale.py --url postgresql+psycopg://postgres@127.0.0.1:55433/scale_bench [--repeat 3]
        [--warmup 1]
    dropdb -h 127.0.0.1 -p 55433 -U postgres scale_bench

The database is a copy of a template `bench/scale_data.py` built (its users: `ann` annotator, `rev` reviewer,
password `bench-password-long`). Each render is `AppTest` running one page file as a user signed in through the
app's own sign-in (`auth.authenticate`, `auth.start_sign_in`), in a new session each time (a browser tab
opening the page), except the Browse filter and search, which time the run after the widget changes in a session
that already shows the first page. "first" renders clear Streamlit's caches before running (`st.cache_resource`:
Team's and Report's server-wide snapshots, as after a server start; `st.cache_data`: the filter options, kept
60 s); "later" renders run right after one. Each figure is the median of `--repeat` renders after `--warmup` (one)
untimed renders of the same page (imports, Streamlit's first-run work). Also the process's CPU seconds (all threads)
and AppTest's floor, a page that only prints a title. Load from other jobs moves the wall clock: the load average is
printed before and after.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from sqlalchemy import Engine  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from annotator.accounts import auth  # noqa: E402
from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.database.vocabulary import LabelState  # noqa: E402
from tests.support.candidates import sign_in_app  # noqa: E402

PASSWORD = "bench-password-long"
GOAL = 0.5
SEARCH = "r4321x"  # one problem position's mark: its candidates' rewritten questions end "(rewrite r4321x)"


@dataclass(frozen=True)
class Case:
    """One figure: `page` opened by `who`; `change`, if any, is applied after a first untimed run and the rerun
    is timed; `cold` clears Streamlit's caches first."""

    name: str
    page: str
    who: str
    cold: bool = False
    change: Callable[[AppTest], None] | None = None


CASES = [
    Case("Annotate, first load", "annotate", "ann", cold=True),
    Case("Browse, first page", "browse", "rev", cold=True),
    Case("Browse, a filter (label state disputed)", "browse", "rev",
         change=lambda app: app.selectbox(key="browse_state").select(LabelState.disputed.value)),
    Case(f"Browse, a search ({SEARCH})", "browse", "rev",
         change=lambda app: app.text_input(key="browse_search").input(SEARCH)),
    Case("Overview", "overview", "rev"),
    Case("Team, first open after start", "team", "rev", cold=True),
    Case("Team, later", "team", "rev"),
    Case("Adjudicate", "adjudicate", "rev"),
    Case("Review", "review", "rev"),
    Case("Report, first open after start", "report", "rev", cold=True),
    Case("Report, later", "report", "rev"),
]


def _users(engine: Engine) -> dict[str, auth.User]:
    with write_session(engine) as session:
        found = {name: auth.authenticate(session, name=name, password=PASSWORD) for name in ("ann", "rev")}
    missing = [name for name, user in found.items() if user is None]
    if missing:
        raise SystemExit(f"no user {', '.join(missing)} with the bench password: is this a scale_data.py copy?")
    return found  # type: ignore[return-value]


def _app(engine: Engine, user: auth.User, page: str) -> AppTest:
    app = AppTest.from_file(str(ROOT / "app_pages" / f"{page}.py"), default_timeout=600)
    sign_in_app(app, engine, user)
    return app


def render(engine: Engine, user: auth.User, case: Case) -> tuple[float, float]:
    """Wall and CPU seconds of one render."""
    app = _app(engine, user, case.page)
    if case.change is not None:
        app.run()
        case.change(app)
    if case.cold:
        st.cache_resource.clear()
        st.cache_data.clear()
    start, start_cpu = time.perf_counter(), time.process_time()
    app.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    if app.exception:
        raise SystemExit(f"{case.name}: {app.exception}")
    return wall, cpu


def floor() -> float:
    app = AppTest.from_string("import streamlit as st\nst.title('A page')", default_timeout=60)
    start = time.perf_counter()
    app.run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="a copy of the scale data set, postgresql+psycopg://...")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="the cases whose name starts with one of these")
    parser.add_argument("--warmup", type=int, default=1, help="untimed renders of each case first")
    args = parser.parse_args()
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # AppTest's bare-mode warnings
    engine = get_engine(args.url)
    users = _users(engine)
    cases = [case for case in CASES if not args.only or any(case.name.startswith(only) for only in args.only)]
    load_before = " ".join(f"{value:.2f}" for value in os.getloadavg())
    floors = [floor() for _ in range(args.repeat)]
    rows = []
    for case in cases:
        for _ in range(args.warmup):
            render(engine, users[case.who], case)  # untimed: imports and first-run work
        samples = [render(engine, users[case.who], case) for _ in range(args.repeat)]
        wall, cpu = statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)
        rows.append((case.name, wall, cpu, max(s[0] for s in samples)))
        print(f"  {case.name}: {wall:.2f} s ({', '.join(f'{s[0]:.2f}' for s in samples)})", flush=True)
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"\n{args.url.rsplit('/', 1)[-1]}: server time per render, AppTest, median of {args.repeat}; "
          f"floor (a title only) {statistics.median(floors):.2f} s; load average before {load_before}, "
          f"after {load_after}")
    print(f"| page | wall s | CPU s | max s | goal {GOAL} s |\n|---|---|---|---|---|")
    for name, wall, cpu, worst in rows:
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {worst:.2f} | {'ok' if wall <= GOAL else 'over'} |")


if __name__ == "__main__":
    main()
