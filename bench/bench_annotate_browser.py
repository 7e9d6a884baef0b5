"""Keypress -> next candidate visible on the annotate page, in headless Chromium, against the bare floor.

For each database size (default 1,000 and 100,000 candidates, with twice as many labels from 20 other
annotators) the app runs under `streamlit run app.py`; one signed-in annotator presses decision keys
(1 / 2 / 0). The floor (`bench/floor_app.py`: sign-in form, `st.navigation`, a button shortcut that bumps a
counter) runs in the same way, from the same directory (so with the same `.streamlit/config.toml`), and is
driven in the same run: floor and apps take turns press by press, the same number of presses each.

Each press is measured twice:
- in the page, with `bench_keypress.py`'s probe: from the keydown event to the first frame painted once the
  heading names the next item (`bench_N_...`) and its text `(rewrite rNx)` shows (a MutationObserver, no
  round trips; the floor draws its counter in the same form);
- by Playwright: from `keyboard.press` until those are visible (includes the automation round trips).
Before each press (untimed) the run has ended, the button is mounted, and `--pause-ms` passes: an annotator
reads before pressing, and the server finishes what it does after a run.

    python bench/bench_annotate_browser.py                 # 1k and 100k, 60 presses each
    python bench/bench_annotate_browser.py --sizes 1000 --presses 30

Candidates are inserted with SQLAlchemy Core executemany (not the importer): 100k take ~20 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.accounts import auth  # noqa: E402
from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.database.models import Annotation, AnnotationEvent, Annotator, Candidate, Problem, utcnow  # noqa: E402
from annotator.labelling.queue import set_labels_per_candidate  # noqa: E402
from bench.bench_keypress import PROBE  # noqa: E402  (the one in-page probe of the key benchmarks)
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_app, stop_app  # noqa: E402

PASSWORD = "quiet harbour lantern"
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
    """One signed-in browser tab on one app; `press()` times a keypress until the next item is visible."""

    def __init__(self, browser, url: str, name: str, password: str, pause_ms: int) -> None:  # type: ignore[no-untyped-def]
        context = browser.new_context()
        context.add_init_script(PROBE)
        self.page = context.new_page()
        self.pause_ms = pause_ms
        self.page.goto(url)
        self.page.get_by_role("textbox", name="Name").fill(name)
        self.page.get_by_role("textbox", name="Password").fill(password)
        self.page.get_by_role("textbox", name="Password").press("Enter")

    def idle(self) -> None:
        self.page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")

    def wait_heading(self, prefix: str) -> None:
        self.page.locator("h4", has_text=prefix).first.wait_for()

    def press(self, key: str, button: str, heading: str, text: str) -> tuple[float, float]:
        """(in-page ms from keydown to the painted frame, Playwright ms from `keyboard.press` to visible)."""
        # Untimed: the run has ended, the shortcut's button is mounted (else the key does nothing), and the
        # annotator "reads" for `pause_ms` (the server finishes its after-run work, as between real keys).
        self.idle()
        self.page.locator(f".st-key-{button} button").wait_for()
        self.page.wait_for_timeout(self.pause_ms)
        old = self.page.evaluate("window.__benchHeading()")
        self.page.evaluate("([old, marks]) => window.__benchWatch(old, marks)", [old, ["rewrite"]])
        started = time.perf_counter()
        self.page.keyboard.press(key)
        self.wait_heading(heading)
        self.page.get_by_text(text).first.wait_for()
        round_trip = (time.perf_counter() - started) * 1000
        self.page.wait_for_function("window.__bench.painted !== null")
        in_page = self.page.evaluate("window.__bench.painted - window.__bench.start")
        return in_page, round_trip


def _stats(samples: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"n": len(samples), "p50": round(statistics.median(samples), 1), "p95": round(cuts[94], 1),
            "mean": round(statistics.fmean(samples), 1)}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _press_all(args: argparse.Namespace, urls: list[str], samples: dict[str, dict[str, list[float]]]) -> None:
    """Press keys on every app (the floor first, then one per size), interleaved, into `samples`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        floor_driver = Driver(browser, urls[0], "bench", "floor", args.pause_ms)
        floor_driver.wait_heading("bench_0_floor ·")
        drivers = {}
        for size, url in zip(args.sizes, urls[1:], strict=True):
            driver = Driver(browser, url, "bench", PASSWORD, args.pause_ms)
            driver.wait_heading("bench_0_remove_1 ·")
            drivers[size] = driver
        counters = {"floor": 0, **dict.fromkeys(args.sizes, 0)}

        def floor_press() -> tuple[float, float]:
            counters["floor"] += 1
            n = counters["floor"]
            return floor_driver.press("1", "next", f"bench_{n}_floor ·", f"(rewrite r{n}x)")

        def app_press(size: int) -> tuple[float, float]:
            key = KEYS[counters[size] % len(KEYS)]
            counters[size] += 1
            i = counters[size]
            return drivers[size].press(key, f"decide_{key}", f"bench_{i}_remove_1 ·", f"(rewrite r{i}x)")

        presses = [("floor", floor_press), *((f"app_{size}", lambda size=size: app_press(size))
                                             for size in args.sizes)]
        for index in range(args.warmup + args.presses):
            # Interleaved press by press, so that load from other jobs falls on all apps alike.
            for name, press in presses:
                in_page, round_trip = press()
                if index >= args.warmup:
                    samples[name]["in_page"].append(in_page)
                    samples[name]["playwright"].append(round_trip)
        browser.close()


def _report(args: argparse.Namespace, names: list[str], samples: dict[str, dict[str, list[float]]],
            load_before: str, load_after: str, streamlit_version: str) -> None:
    """The machine, then p50/p95 per app and measure against the floor's, then everything as JSON."""
    results = {name: {measure: _stats(values) for measure, values in by_measure.items()}
               for name, by_measure in samples.items()}
    print(f"machine: {os.cpu_count()} cores, {_cpu()}, python {platform.python_version()}, "
          f"streamlit {streamlit_version}; load average (1/5/15 min) before {load_before}, after {load_after}")
    print(f"{args.presses} timed presses per app after {args.warmup} warm-up, interleaved, {args.pause_ms} ms pause")
    for measure, title in (("in_page", "in the page: keydown -> frame painted with the next item"),
                           ("playwright", "Playwright: keyboard.press -> next item visible")):
        floor_stats = results["floor"][measure]
        print(f"\n{title}")
        print(f"{'':>12} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'p50/floor':>10} {'p95/floor':>10}")
        for name in names:
            values = results[name][measure]
            print(f"{name:>12} {values['n']:>4} {values['p50']:>8} {values['p95']:>8} "
                  f"{values['p50'] / floor_stats['p50']:>10.2f} {values['p95'] / floor_stats['p95']:>10.2f}")
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--labels-per-candidate", type=int, default=2, help="existing labels per candidate")
    parser.add_argument("--presses", type=int, default=60, help="timed presses per app (floor and each size)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed presses per app first")
    parser.add_argument("--pause-ms", type=int, default=300, help="untimed reading time before each press")
    args = parser.parse_args()

    import streamlit

    workdir = Path(tempfile.mkdtemp(prefix="bench_annotate_"))
    apps = []
    names = ["floor", *(f"app_{size}" for size in args.sizes)]
    # name -> measure ("in_page": keydown to painted frame, "playwright": keyboard.press to visible) -> samples
    samples: dict[str, dict[str, list[float]]] = {name: {"in_page": [], "playwright": []} for name in names}
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
        load_before = _load()
        _press_all(args, [app.url for app in apps], samples)
        load_after = _load()
    finally:
        for app in apps:
            stop_app(app)
    _report(args, names, samples, load_before, load_after, streamlit.__version__)


if __name__ == "__main__":
    main()
