"""Key press -> next item visible, on Adjudicate, with one in-page probe (Annotate's and Review's queues, held in
the browser: `bench_queue_keys.py`).

One database (default 100,000 candidates with 3 labels each from 12 annotators, most of them disputes, and
100,000 transcripts, one per candidate: `bench_queue_keys.py` measures Review on them), one `streamlit run app.py`,
a headless Chromium tab per page: a reviewer on Adjudicate (1 / 2 / 0). The pages take turns press by press, so that
load from other jobs falls on all of them alike.

The probe (`PROBE`, installed in every tab before it loads) times each press inside the browser, with no
automation round trips: from the keydown event to the first frame painted after the workspace's heading
names another candidate (`bench_N_...`) and what the page shows of it is in the page: the end of its rewritten
question (`(rewrite rNx)`), in a Markdown block or a text element. Before
each press (untimed) the run has ended, the key's button is mounted, and `--pause-ms` passes (a person reads
before pressing).

    python bench/bench_keypress.py                               # 100k, 60 presses per page
    python bench/bench_keypress.py --candidates 2000 --presses 20
    python bench/bench_keypress.py --database /tmp/keys.sqlite   # seeded once, reused by later runs
    python bench/bench_keypress.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY --pages adjudicate
        # an existing database, never seeded: a copy of the scale data set (`bench/scale_data.py`), whose
        # data sources `bench` and `benchgsm` the probe knows as well

Seeding uses Core executemany (not the importer); at 100,000 candidates it writes a file of over a gigabyte.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.accounts import auth  # noqa: E402
from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.database.models import Annotation, Annotator, Candidate, Problem, Transcript, utcnow  # noqa: E402
from annotator.labelling.queue import set_labels_per_candidate  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_app, stop_app  # noqa: E402
from tests.support.candidates import store_resolved_labels  # noqa: E402

PASSWORD = "bench-password-long"
OTHERS = 12
CHUNK = 5000
CLASSES = ["incorrect"] * 6 + ["unsolvable"] * 2 + ["unknown", "unmatched"]
VERDICTS = {"unsolvable": "S", "unknown": "R"}
# A response and its reasoning of the length and math density models write (about 2,000 and 8,000 characters).
_STEP = "Since $x > {k}$ and $x^2 = {k2}$, we get $x = \\sqrt{{{k2}}}$, so $x \\cdot x - {k} = {d}$. "
RESPONSE = "".join(_STEP.format(k=k, k2=k * k, d=k * k - k) for k in range(1, 26)) + "So $\\boxed{4}$."
# The same length in words, no math (`--response plain`): what the math costs the browser.
PLAIN = "".join(f"Since x is more than {k} and its square is {k * k}, we get x as its root, hence {k * k - k}. "
                for k in range(1, 26)) + "So the answer is 4."
REASONING = "".join(_STEP.format(k=k, k2=k * k, d=k * k - k) for k in range(1, 101))


def _chunk(session, start: int, stop: int, people: list[int], rng: random.Random, response: str) -> None:  # type: ignore[no-untyped-def]
    now = utcnow()
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
         "rewritten_condition": f"removed $x < {i + 2}$", "unsolvable_reason": "Without the bound $x$ is not unique.",
         "question": f"Problem {i}: let $x > {i}$ and $x < {i + 2}$ be an integer. Find $x^2$.",
         "ground_truth": str((i + 1) ** 2), "status": "pending", "position": i,
         "llm_outputs": {"verification": "True"}, "created_at": now, "updated_at": now}
        for i in range(start, stop)
    ])
    rows = []
    for i in range(start, stop):
        for annotator_id in rng.sample(people, 3):
            accepted = rng.random() < 0.8
            rows.append({"candidate_id": i + 1, "annotator_id": annotator_id, "human_check": int(accepted),
                         "difficulty_eval": rng.randint(0, 1) if accepted else None, "created_at": now,
                         "updated_at": now})
    session.execute(insert(Annotation), rows)
    store_resolved_labels(session, range(start + 1, stop + 1))
    transcripts = []
    for i in range(start, stop):
        judge_class = CLASSES[i % len(CLASSES)] if i % 97 else None
        transcripts.append({
            "data_id": f"bench_{i}_remove_1", "problem_id": i + 1, "candidate_id": i + 1,
            "model": f"model-{i % 4}", "prompt": "standard", "sample": 0,
            "response": f"{response} (response r{i}x)", "reasoning": REASONING, "extracted_answer": "4",
            "judge_rule": "reliablemath", "judge_class": judge_class,
            "judge": VERDICTS.get(judge_class, "F") if judge_class else None,
            "differs_from_reference": i % 211 == 0, "source": "bench", "created_at": now,
        })
    session.execute(insert(Transcript), transcripts)


def seed(url: str, candidates: int, response: str = RESPONSE) -> None:
    """`candidates` candidates with 3 labels each (the project wants 4, so all are in the annotator's queue;
    about 85% are disputes) and one transcript on each; an annotator "ann" and a reviewer "rev"."""
    engine = get_engine(url)
    rng = random.Random(0)
    with write_session(engine) as session:
        set_labels_per_candidate(session, value=4)
        auth.create_user(session, name="ann", role="annotator", password=PASSWORD)
        auth.create_user(session, name="rev", role="reviewer", password=PASSWORD)
        session.execute(insert(Annotator), [{"name": f"other{i}", "role": "annotator"} for i in range(OTHERS)])
        people = list(session.execute(select(Annotator.id).where(Annotator.name.like("other%"))).scalars())
    for start in range(0, candidates, CHUNK):
        with write_session(engine) as session:
            _chunk(session, start, min(candidates, start + CHUNK), people, rng, response)
    engine.dispose()


# Installed in every tab before it loads. `__benchWatch(old)` arms it with the heading on screen; the press's
# keydown starts the clock; it stops at the first frame painted once an h4 names another candidate N and every
# mark "(MARK rNx)" asked for is in a Markdown block or a text element (`st.text`) displayed in the main area.
PROBE = """
window.__bench = {old: null, start: null, found: null, painted: null};
addEventListener('keydown', (event) => {
  const b = window.__bench;
  if (b.old !== null && b.start === null) b.start = event.timeStamp;
}, true);
window.__benchHeading = () => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const heading = [...main.querySelectorAll('h4')].map((h) => h.textContent).find((t) => /^bench[a-z]*_\\d+_/.test(t));
  return heading === undefined ? null : heading;
};
window.__benchWatch = (old, marks) => {
  const b = window.__bench;
  Object.assign(b, {old, start: null, found: null, painted: null});
  const shown = () => {
    const heading = window.__benchHeading();
    if (heading === null || heading === old) return false;
    const number = heading.match(/^bench[a-z]*_(\\d+)_/)[1];
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    // Visible: in a Markdown block or a text element that is displayed.
    const blocks = [...main.querySelectorAll('[data-testid="stMarkdownContainer"], [data-testid="stText"]')];
    return marks.every((mark) => blocks.some((block) => block.textContent.includes(`(${mark} r${number}x)`)
      && block.checkVisibility()));
  };
  const observer = new MutationObserver(() => {
    if (b.start === null || b.found !== null || !shown()) return;
    b.found = performance.now();
    observer.disconnect();
    // The frame that shows it: the next animation frame, then the task after its paint.
    requestAnimationFrame(() => setTimeout(() => { b.painted = performance.now(); }, 0));
  });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true});
};
"""
# page -> (link in the navigation, who, the keys pressed in turn with their buttons, what must be on screen:
# "(rewrite rNx)" ends the candidate's rewritten question, "(response rNx)" the transcript's response)
PAGES = {
    "adjudicate": ("Adjudicate", "rev", [("1", "adjudicate_1"), ("2", "adjudicate_2"), ("0", "adjudicate_0")],
                   ["rewrite"]),
}

# page -> the sidebar toggle turned on once the page is open
TOGGLES: dict[str, str] = {}


class Tab:
    """One signed-in tab on one page; `press()` times a key until the next candidate is visible."""

    def __init__(self, browser, url: str, page: str, pause_ms: int) -> None:  # type: ignore[no-untyped-def]
        from tests.e2e.conftest import open_page

        link, name, self.keys, self.marks = PAGES[page]
        context = browser.new_context()
        context.add_init_script(PROBE)
        self.page = context.new_page()
        self.pause_ms = pause_ms
        self.count = 0
        if link is None:
            self.page.goto(url)
            self.page.get_by_role("textbox", name="Name").fill(name)
            self.page.get_by_role("textbox", name="Password").fill(PASSWORD)
            self.page.get_by_role("textbox", name="Password").press("Enter")
        else:
            open_page(self.page, url, name=name, password=PASSWORD, link=link)
        self.page.wait_for_function("window.__benchHeading() !== null", timeout=120_000)
        if page in TOGGLES:
            self.page.get_by_text(TOGGLES[page]).click()
            self.page.locator(".st-key-response .katex").first.wait_for(timeout=120_000)
            self.page.wait_for_function("document.activeElement === document.body")  # keys are keys again

    def press(self) -> float:
        """In-page ms from keydown to the frame painted with the next candidate."""
        key, button = self.keys[self.count % len(self.keys)]
        self.count += 1
        self.page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
        self.page.locator(f".st-key-{button} button").wait_for()
        self.page.wait_for_timeout(self.pause_ms)
        old = self.page.evaluate("window.__benchHeading()")
        self.page.evaluate("([old, marks]) => window.__benchWatch(old, marks)", [old, self.marks])
        self.page.keyboard.press(key)
        self.page.wait_for_function("window.__bench.painted !== null")
        return self.page.evaluate("window.__bench.painted - window.__bench.start")


def _stats(samples: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"n": len(samples), "p50": round(statistics.median(samples), 1), "p95": round(cuts[94], 1)}


def _machine() -> str:
    cpu = platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores, {cpu}, python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=100_000, help="candidates, and as many transcripts")
    parser.add_argument("--database", type=Path, help="SQLite file: seeded if missing, else reused")
    parser.add_argument("--url", help="a database URL (e.g. PostgreSQL) used as it is, never seeded; "
                        "instead of --database")
    parser.add_argument("--presses", type=int, default=60, help="timed presses per page")
    parser.add_argument("--warmup", type=int, default=5, help="untimed presses per page first")
    parser.add_argument("--pause-ms", type=int, default=300, help="untimed reading time before each press")
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=list(PAGES))
    parser.add_argument("--response", choices=["math", "plain"], default="math",
                        help="when seeding: responses with about 100 math segments, or the same without math")
    args = parser.parse_args()

    import streamlit
    from playwright.sync_api import sync_playwright

    workdir = Path(tempfile.mkdtemp(prefix="bench_keypress_"))
    database = args.database or workdir / "keys.sqlite"
    url = args.url or f"sqlite:///{database}"
    if args.url:
        database = args.url.rsplit("@", 1)[-1]  # what the report names, without the user
    elif not database.exists():
        started = time.perf_counter()
        seed(url, args.candidates, RESPONSE if args.response == "math" else PLAIN)
        print(f"seeded {args.candidates:,} candidates x 3 labels and transcripts in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
    samples: dict[str, list[float]] = {page: [] for page in args.pages}
    app = start_app(url, workdir / "app.log")
    load_before = " ".join(f"{value:.2f}" for value in os.getloadavg())
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            tabs = {page: Tab(browser, app.url, page, args.pause_ms) for page in args.pages}
            for index in range(args.warmup + args.presses):
                for page, tab in tabs.items():
                    took = tab.press()
                    if index >= args.warmup:
                        samples[page].append(took)
            browser.close()
    finally:
        stop_app(app)
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    results = {page: _stats(values) for page, values in samples.items()}
    print(f"machine: {_machine()}, streamlit {streamlit.__version__}; load average (1/5/15 min) before "
          f"{load_before}, after {load_after}")
    print(f"{database}: {args.presses} timed presses per page after {args.warmup} warm-up, interleaved, "
          f"{args.pause_ms} ms pause; in the page: keydown -> frame painted with the next candidate")
    base = next(iter(results.values()), None)
    print(f"{'':>15} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'p50/first':>13}")
    for page, values in results.items():
        ratio = f"{values['p50'] / base['p50']:.2f}" if base else "-"
        print(f"{page:>15} {values['n']:>4} {values['p50']:>8} {values['p95']:>8} {ratio:>13}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
