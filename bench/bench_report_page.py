"""The Report page with 100,000 transcripts: time to render, cold (the first open after the server starts, which
counts the verdicts) and warm (every later open: the latest snapshot, recounted in the background when stale).

    python bench/bench_report_page.py [--transcripts 100000] [--repeat 3]

Set-up (untimed): the ReliableMath release imported into a real SQLite file; N transcripts over its 1,415 items
from 7 models x 2 prompts, each response about 3,000 characters, with judge verdicts (S/R/F drawn at random)
and a human verdict on 2% of them, inserted with Core executemany. Timed: `AppTest` runs of `app_pages/report.py`
as a signed-in reviewer; the cold run clears `st.cache_resource` (this process's snapshot) and the stored figures
(`figuresnapshot`, which any other server would show at once: bench_shared_figures.py) first. Baselines
in the same run: one `SELECT count(*)` over the transcripts, and AppTest running a page that only prints a
title. Goal: < 1 s. Also the process's CPU time of each run (all its threads), which a shared machine's load
moves far less than the wall clock.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import delete, func, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import FigureSnapshot, Transcript, utcnow  # noqa: E402
from bench.bench_judge import insert_transcripts, release_items  # noqa: E402
from tests.support.candidates import add_user, sign_in_app  # noqa: E402

PAGE = str(ROOT / "app_pages" / "report.py")
# About 3,000 characters, as a short reasoning model's answer: the report must not read the responses.
RESPONSE = "We reason step by step about the conditions given. " * 60 + "\\boxed{1}"


def seed(url: str, count: int) -> None:
    items = release_items(url)
    rng = random.Random(0)
    now = utcnow()
    rows = []
    for index in range(count):
        item = items[index % len(items)]
        round_ = index // len(items)
        judge = rng.choice("SSRFFF")
        rows.append({
            "data_id": item.data_id, "problem_id": item.problem_id, "candidate_id": item.candidate_id,
            "model": f"model-{round_ % 7}", "prompt": ("standard", "reliable")[round_ // 7 % 2], "sample": round_ // 14,
            "response": RESPONSE, "source": "bench", "created_at": now, "judge_rule": "reliablemath",
            "judge_version": "1", "judge_class": "correct", "judge": judge, "rules_disagree": rng.random() < 0.01,
            "human": rng.choice("SRF") if rng.random() < 0.02 else None,
        })
    insert_transcripts(url, rows)


def render(engine, user, cpu: list[float] | None = None) -> float:  # type: ignore[no-untyped-def]
    """Seconds to run the page; its process CPU seconds (every thread: the page's and the snapshot's) go to `cpu`,
    a figure a loaded machine moves far less than the wall clock."""
    app = AppTest.from_file(PAGE, default_timeout=120)
    sign_in_app(app, engine, user)
    start, start_cpu = time.perf_counter(), time.process_time()
    app.run()
    elapsed = time.perf_counter() - start
    if cpu is not None:
        cpu.append(time.process_time() - start_cpu)
    assert not app.exception and app.dataframe, app.exception
    return elapsed


def floor() -> float:
    """AppTest's own cost for a page that only prints a title: what no page can go below on this machine."""
    app = AppTest.from_string("import streamlit as st\nst.title('Report')", default_timeout=120)
    start = time.perf_counter()
    app.run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcripts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'report.sqlite'}"
        seed(url, args.transcripts)
        engine = get_engine(url)
        user = add_user(engine, "rev", role="reviewer")
        render(engine, user)  # imports and Streamlit's first-run costs, not the page's
        cold, warm, baseline, floors, cold_cpu, warm_cpu = [], [], [], [], [], []
        for _ in range(args.repeat):
            floors.append(floor())
            start = time.perf_counter()
            with read_session(engine) as session:
                session.execute(select(func.count()).select_from(Transcript)).scalar()
            baseline.append(time.perf_counter() - start)
            st.cache_resource.clear()
            with write_session(engine) as session:  # nothing stored either: the figures are computed again
                session.execute(delete(FigureSnapshot))
            cold.append(render(engine, user, cold_cpu))
            warm.append(render(engine, user, warm_cpu))
    print(f"Report page, {args.transcripts:,} transcripts, median of {args.repeat}")
    print(f"  baseline SELECT count(*): {statistics.median(baseline):.3f} s; AppTest floor (a title only): "
          f"{statistics.median(floors):.2f} s")
    print(f"  cold (first open after the server starts): {statistics.median(cold):.2f} s; "
          f"warm: {statistics.median(warm):.2f} s (goal < 1 s)")
    print(f"  CPU (the process, all threads): cold {statistics.median(cold_cpu):.2f} s; "
          f"warm {statistics.median(warm_cpu):.2f} s")


if __name__ == "__main__":
    main()
