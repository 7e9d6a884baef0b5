"""Keypress -> next candidate visible on the annotate page, in headless Chromium, against the bare floor.

For each database size (default 1,000 and 100,000 candidates, with twice as many labels from 20 other
annotators) the app runs under `streamlit run app.py`; one signed-in annotator presses decision keys
(1 / 2 / 0) and we time each press until the next candidate's heading and rewritten-question text are
visible. In the same run, interleaved in rounds, the floor (`bench/floor_app.py`: sign-in form,
`st.navigation`, a button shortcut that bumps a counter) is driven the same way.

    python bench/bench_annotate_browser.py                 # 1k and 100k, 60 presses each
    python bench/bench_annotate_browser.py --sizes 1000 --presses 30

Candidates are inserted with SQLAlchemy Core executemany (not the importer): 100k take ~1 min on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator import auth  # noqa: E402
from annotator.db import get_engine, write_session  # noqa: E402
from annotator.models import Annotation, AnnotationEvent, Annotator, Candidate, Problem, utcnow  # noqa: E402
from annotator.queue import set_labels_per_candidate  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_app, stop_app  # noqa: E402

PASSWORD = "bench-password"
OTHER_ANNOTATORS = 20
KEYS = ("1", "2", "0")
BATCH = 5000


def seed(url: str, candidates: int, labels_per_candidate_now: int) -> None:
    """`candidates` candidates; each already has `labels_per_candidate_now` labels from other annotators
    (so `candidates * labels_per_candidate_now` labels and as many events); the project wants one more."""
    engine = get_engine(url)
    now = utcnow()
    with write_session(engine) as session:
        set_labels_per_candidate(session, value=labels_per_candidate_now + 1)
        auth.create_user(session, name="bench", role="annotator", password=PASSWORD)
        session.execute(
            insert(Annotator),
            [{"name": f"other{i}", "role": "annotator", "is_system": False, "is_active": True, "created_at": now}
             for i in range(OTHER_ANNOTATORS)],
        )
    other_ids = list(range(2, 2 + OTHER_ANNOTATORS))
    for start in range(0, candidates, BATCH):
        stop = min(candidates, start + BATCH)
        with write_session(engine) as session:
            session.execute(insert(Problem), [
                {"id": i + 1, "data_source": "math", "position": i, "source_id": i, "created_at": now,
                 "question": f"Problem {i}: let $x > {i}$ and $x < {i + 2}$ be an integer. Find $x^2$.",
                 "ground_truth": str((i + 1) ** 2)}
                for i in range(start, stop)
            ])
            session.execute(insert(Candidate), [
                {"id": i + 1, "problem_id": i + 1, "data_id": f"bench_{i}_remove_1", "data_source": "math",
                 "rewrite_type": "remove", "condition_index": 1, "extracted_condition": f"$x < {i + 2}$",
                 "rewritten_question": f"Problem {i}: let $x > {i}$ be an integer (rewrite r{i}x). Find $x^2$.",
                 "rewritten_condition": f"removed $x < {i + 2}$",
                 "unsolvable_reason": "Without the upper bound $x$ is not unique.",
                 "question": f"Problem {i}: let $x > {i}$ and $x < {i + 2}$ be an integer. Find $x^2$.",
                 "ground_truth": str((i + 1) ** 2), "status": "pending", "position": i,
                 "label_count": labels_per_candidate_now, "human_check": 1, "difficulty_eval": 0,
                 "llm_outputs": {"verification": "True", "unsolvable_analysis": "The bound was removed."},
                 "created_at": now, "updated_at": now}
                for i in range(start, stop)
            ])
            annotations, events = [], []
            for i in range(start, stop):
                for k in range(labels_per_candidate_now):
                    annotator_id = other_ids[(i + k) % OTHER_ANNOTATORS]
                    annotations.append({"candidate_id": i + 1, "annotator_id": annotator_id, "human_check": 1,
                                        "difficulty_eval": 0, "created_at": now, "updated_at": now})
                    events.append({"candidate_id": i + 1, "annotator_id": annotator_id, "action": "create",
                                   "old": None, "new": {"human_check": 1, "difficulty_eval": 0, "comment": None},
                                   "at": now})
            session.execute(insert(Annotation), annotations)
            session.execute(insert(AnnotationEvent), events)
    engine.dispose()


class Driver:
    """One signed-in browser tab on one app; `press()` times a keypress until `expect` is visible."""

    def __init__(self, browser, url: str, name: str, password: str) -> None:  # type: ignore[no-untyped-def]
        self.page = browser.new_context().new_page()
        self.page.goto(url)
        self.page.get_by_role("textbox", name="Name").fill(name)
        self.page.get_by_role("textbox", name="Password").fill(password)
        self.page.get_by_role("textbox", name="Password").press("Enter")

    def idle(self) -> None:
        self.page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")

    def wait_heading(self, prefix: str) -> None:
        self.page.locator("h4", has_text=prefix).first.wait_for()

    def press(self, key: str, button: str, heading: str, text: str | None = None) -> float:
        # Untimed: the run has ended and the shortcut's button is mounted (else the key does nothing).
        self.idle()
        self.page.locator(f".st-key-{button} button").wait_for()
        started = time.perf_counter()
        self.page.keyboard.press(key)
        self.wait_heading(heading)
        if text is not None:
            self.page.get_by_text(text).first.wait_for()
        return (time.perf_counter() - started) * 1000


def _stats(samples: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"n": len(samples), "p50": round(statistics.median(samples), 1), "p95": round(cuts[94], 1),
            "mean": round(statistics.fmean(samples), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--labels-per-candidate", type=int, default=2, help="existing labels per candidate")
    parser.add_argument("--presses", type=int, default=60, help="timed presses per app and size")
    parser.add_argument("--rounds", type=int, default=6, help="floor and app alternate in this many rounds")
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    workdir = Path(tempfile.mkdtemp(prefix="bench_annotate_"))
    results: dict[str, dict[str, float]] = {}
    apps = []
    try:
        floor_db = "sqlite:///" + str(workdir / "unused.sqlite")
        floor = start_app(floor_db, workdir / "floor.log", script="bench/floor_app.py")
        apps.append(floor)
        for size in args.sizes:
            url = f"sqlite:///{workdir / f'bench_{size}.sqlite'}"
            started = time.perf_counter()
            seed(url, size, args.labels_per_candidate)
            print(f"seeded {size} candidates, {size * args.labels_per_candidate} labels in "
                  f"{time.perf_counter() - started:.1f}s", flush=True)
            apps.append(start_app(url, workdir / f"app_{size}.log"))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            floor_driver = Driver(browser, floor.url, "bench", "floor")
            floor_driver.wait_heading("count 0 ·")
            drivers = {}
            for size, app in zip(args.sizes, apps[1:], strict=True):
                driver = Driver(browser, app.url, "bench", PASSWORD)
                driver.wait_heading("bench_0_remove_1 ·")
                drivers[size] = driver
            counters = {"floor": 0, **dict.fromkeys(args.sizes, 0)}
            samples: dict[str, list[float]] = {"floor": [], **{f"app_{size}": [] for size in args.sizes}}

            def floor_press() -> float:
                counters["floor"] += 1
                return floor_driver.press("1", "next", f"count {counters['floor']} ·")

            def app_press(size: int) -> float:
                key = KEYS[counters[size] % len(KEYS)]
                counters[size] += 1
                i = counters[size]
                return drivers[size].press(key, f"decide_{key}", f"bench_{i}_remove_1 ·", f"(rewrite r{i}x)")

            for _ in range(args.warmup):
                floor_press()
                for size in args.sizes:
                    app_press(size)
            per_round = max(1, args.presses // args.rounds)
            for _ in range(args.rounds):
                samples["floor"] += [floor_press() for _ in range(per_round)]
                for size in args.sizes:
                    samples[f"app_{size}"] += [app_press(size) for _ in range(per_round)]
            browser.close()
        for name, values in samples.items():
            results[name] = _stats(values)
    finally:
        for app in apps:
            stop_app(app)
    floor_stats = results["floor"]
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}")
    print(f"{'':>12} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'p50/floor':>10} {'p95/floor':>10}")
    for name, values in results.items():
        print(f"{name:>12} {values['n']:>4} {values['p50']:>8} {values['p95']:>8} "
              f"{values['p50'] / floor_stats['p50']:>10.2f} {values['p95'] / floor_stats['p95']:>10.2f}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
