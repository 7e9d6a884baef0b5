"""The label-side pages' core work on an existing database: Adjudicate, Team, Overview, Browse.

    python bench/bench_label_pages.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY [--code DIR]
        [--repeat 3] [--only adjudicate,team,overview,browse,pages]

Run it on a copy of the 1M data set (`/work/notes/scale-ready.md`, `bench/scale_data.py`). `--code` is the
checkout whose `annotator` is timed (default: this one), so the same script times the code before and after
a change (the database must be at that code's schema). Each figure is the median of `--repeat` runs, each in its
own read transaction on a warm cache (one untimed run first):
- Adjudicate: what a new browser session runs on open (`DisputeQueue().next`: the next dispute and the count
  left) and `disputes(limit=50)`;
- Team: the snapshot's figures as the page computes them on first open (labels read, activity, gold accuracy,
  every agreement coefficient), and the part of it that reads the labels;
- Overview: the page's statistics and progress (`stats.compute` and `stats.progress`: the shared figures'
  background computation, `annotator.figures.pages.OVERVIEW`; the page reads the stored ones);
- Browse: the first page unfiltered, with a label-state filter, and with searches (count and page).
- with `pages` in `--only`: Adjudicate, Overview and Browse (first page, a search) rendered whole under AppTest.
Nothing is written but the sign-ins of `pages`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _timed(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    work()  # warm the cache and the imports
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _adjudicate(run: Callable[..., None]) -> None:
    from annotator.labelling import adjudication

    def first_open(session: Any) -> tuple[int | None, int]:
        queue = adjudication.DisputeQueue()
        return queue.next(session), len(queue)
    run("Adjudicate: DisputeQueue().next (open)", first_open, lambda r: f"first {r[0]}, {r[1] + 1} left")
    run("Adjudicate: disputes(limit=50)", lambda s: adjudication.disputes(s, limit=50),
        lambda r: f"agreement {r[0]['agreement']:.3f}..{r[-1]['agreement']:.3f}")


def _team(run: Callable[..., None]) -> None:
    from annotator.figures.agreement import label_agreement
    from annotator.labelling import accuracy, gold, labels

    # What the page reads the labels with (in `labels` or `accuracy`, as the revision benchmarked has it).
    read = getattr(accuracy, "label_frame", getattr(labels, "label_frame", labels.label_rows))

    def team(session: Any) -> dict[str, Any]:
        rows = read(session)
        activity = labels.activity(session)
        on_gold = gold.gold_accuracy(session)
        report = label_agreement(rows, gold={n: p["gold_accuracy"] for n, p in on_gold.items()})
        return {"agreement": report, "activity": activity}
    run("Team: figures (first open / recompute)", team,
        lambda r: f"alpha {r['agreement']['human_check']['alpha']:.6f}")
    run(f"Team: {read.__module__.rsplit('.', 1)[-1]}.{read.__name__}", read, lambda r: f"{len(r):,} labels")
    run("Team: labels.activity", labels.activity)


def _overview(run: Callable[..., None]) -> None:
    from annotator.figures import stats

    def overview(session: Any) -> dict[str, Any]:
        if hasattr(stats, "groups"):
            counted = stats.groups(session)
            return {"stats": stats.compute(session, counted=counted),
                    "progress": stats.progress(session, counted=counted)}
        return {"stats": stats.compute(session), "progress": stats.progress(session)}
    run("Overview: stats.compute + stats.progress", overview, lambda r: f"vetted {r['stats']['total']['vetted']:,}")


def _browse(run: Callable[..., None], engine: Any) -> None:
    from annotator.accounts import auth
    from annotator.database.engine import read_session
    from annotator.labelling import browse

    with read_session(engine) as session:
        viewer = auth.authenticate(session, name="rev", password="bench-password-long")

    def page(**filters: Any) -> Callable[[Any], Any]:
        return lambda session: browse.list_candidates(session, viewer=viewer, **filters)

    for name, filters in (("first page", {}), ("label state disputed", {"label_state": "disputed"}),
                          ("search 'r12345x' (10 match)", {"search": "r12345x"}),
                          ("search 'remove_3' (200k match)", {"search": "remove_3"}),
                          ("search 'r12345x', page 2", {"search": "r12345x", "page": 2}),
                          ("first page, page 200", {"page": 200})):
        run(f"Browse: {name}", page(**filters), lambda r: f"{r.total:,} candidates")


def _pages(engine: Any, code: str, repeat: int) -> None:
    """Each page rendered whole under Streamlit's AppTest, signed in as `rev`, minus a one-line page's render
    (AppTest's own cost), interleaved; the first render in a new session each time."""
    import tempfile

    from streamlit.testing.v1 import AppTest

    from annotator.accounts import auth
    from annotator.database.engine import read_session
    from tests.support.candidates import sign_in_app

    with read_session(engine) as session:
        user = auth.authenticate(session, name="rev", password="bench-password-long")
    state = {"browse": {"browse_search": "r12345x"}}

    def render(page: str, session_state: dict[str, Any]) -> float:
        app = AppTest.from_file(page, default_timeout=600)
        sign_in_app(app, engine, user)
        for key, value in session_state.items():
            app.session_state[key] = value
        start = time.perf_counter()
        app.run()
        elapsed = time.perf_counter() - start
        assert not app.exception, app.exception
        return elapsed

    with tempfile.TemporaryDirectory() as tmp:
        floor_page = Path(tmp) / "floor.py"
        floor_page.write_text('import streamlit as st\nst.write("floor")\n')
        for name, label in (("adjudicate", "Adjudicate"), ("overview", "Overview"), ("browse", "Browse"),
                            ("browse", "Browse, search 'r12345x'")):
            extra = state.get(name, {}) if "search" in label or name != "browse" else {}
            page = str(Path(code) / "app_pages" / f"{name}.py")
            render(page, extra)
            own = []
            for _ in range(repeat):
                own.append(render(page, extra) - render(str(floor_page), {}))
            print(f"  page {label:<47} {statistics.median(own) * 1000:9.1f} ms  (AppTest render minus floor)",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--code", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="adjudicate,team,overview,browse")
    args = parser.parse_args()
    sys.path.insert(0, args.code)
    from annotator.database.engine import get_engine, read_session

    engine = get_engine(args.url)
    print(f"code: {args.code}  database: {engine.url.database}")

    def run(name: str, work: Callable[[Any], Any], note: Callable[[Any], Any] = lambda result: "") -> None:
        def once() -> Any:
            with read_session(engine) as session:
                return work(session)
        seconds, result = _timed(args.repeat, once)
        print(f"  {name:<52} {seconds * 1000:9.1f} ms  {note(result)}", flush=True)

    only = set(args.only.split(","))
    for name, bench in (("adjudicate", _adjudicate), ("team", _team), ("overview", _overview)):
        if name in only:
            bench(run)
    if "browse" in only:
        _browse(run, engine)
    if "pages" in only:
        _pages(engine, args.code, args.repeat)


if __name__ == "__main__":
    main()
