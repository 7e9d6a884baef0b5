"""A queue held in the browser (Annotate's, or Adjudicate's disputes with `--page adjudicate`, or Review's with
`--page review`): keydown -> next item painted, keydown -> decision committed, and keydown -> decision answered
(stored and committed on the server, the answer back in the browser), at the server and at a distance.

One database (default 100,000 candidates, `keys_data.seed`), one `streamlit run app.py`, one headless Chromium
tab per distance: straight to the server ("near"), and through a TCP proxy that holds each direction `--delay-ms`
("far", 75 ms: a 150 ms round trip). A probe installed before the page loads times each press inside the browser:
from the keydown event to the first frame painted after the heading names another candidate and that candidate's
rewritten question (on Review also the end of its response, typeset) is displayed; and from the keydown to the
moment the server's answer for that decision reaches the page (the component's `annotator-queue` events); and
from the keydown to the moment the decision is committed (seen in `sentdecision` by this process, polling the
database file every millisecond or two from a connection of its own; the keydown's wall-clock time is the
browser's `performance.timeOrigin` plus the event's time: one machine, one clock). Before
each press `--pause-ms` passes (a person reads); the answer time is compared with the round trip (the proxy's two
delays) plus 100 ms.

Then a burst per distance: `--burst` keys `--gap-ms` apart, and the labels (reviews) stored checked against the
keys: as many, on as many items, in the order pressed (Review: the review queue's order).

    python bench/bench_queue_keys.py                          # 100k candidates, 60 presses per distance
    python bench/bench_queue_keys.py --candidates 2000 --presses 20
    python bench/bench_queue_keys.py --database /tmp/keys.sqlite   # seeded once, reused
    python bench/bench_queue_keys.py --page adjudicate --candidates 2000 --presses 20   # the reviewer "rev"
    python bench/bench_queue_keys.py --page review --candidates 2000 --presses 20   # the reviewer "rev" on Review
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.database.models import (  # noqa: E402
    Adjudication,
    Annotation,
    AnnotationEvent,
    Annotator,
    Transcript,
    TranscriptEvent,
)
from annotator.transcripts import review_queue  # noqa: E402
from bench.keys_data import PASSWORD, seed  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, open_page, start_app, stop_app  # noqa: E402
from tests.support.tcp_proxy import DelayProxy  # noqa: E402

# Installed before the page loads: the keydown's time, the frame painted with the next candidate, the answer.
PROBE = """
window.__bench = {old: null, start: null, painted: null, keys: [], answered: {}};
addEventListener('keydown', (event) => {
  const b = window.__bench;
  b.keys.push(event.timeStamp);
  if (b.old !== null && b.start === null) b.start = event.timeStamp;
}, true);
addEventListener('annotator-queue', (event) => {
  const b = window.__bench, d = event.detail;
  if (d.what === 'decided') b.answered[d.id] = {key: b.keys[b.keys.length - 1], answer: null, id: d.id,
                                               wall: performance.timeOrigin + b.keys[b.keys.length - 1]};
  else if (d.what === 'answered' && b.answered[d.id]) b.answered[d.id].answer = performance.now();
});
// The page's queue (Review's, once its page is open: Annotate's, the start page, may linger a moment).
window.__benchRoot = () => document.querySelector('.aq-review') ?? document.querySelector('.aq-root');
window.__benchHeading = () => window.__benchRoot()?.querySelector('.aq-heading')?.textContent ?? null;
window.__benchWatch = (old) => {
  const b = window.__bench;
  Object.assign(b, {old, start: null, painted: null});
  const shown = () => {
    const heading = window.__benchHeading();
    if (heading === null || heading === old || !/^bench[a-z]*_\\d+_/.test(heading)) return false;
    const number = heading.match(/^bench[a-z]*_(\\d+)_/)[1];
    const item = window.__benchRoot()?.querySelector('.aq-item:not([hidden])') ?? null;
    return item !== null && (window.__benchMarks || ['rewrite']).every(
      (mark) => item.textContent.includes(`(${mark} r${number}x)`)) && item.checkVisibility();
  };
  const check = () => {
    if (b.start === null || !shown()) return requestAnimationFrame(check);
    // The frame that shows it: this animation frame, then the task after its paint.
    setTimeout(() => { b.painted = performance.now(); }, 0);
  };
  requestAnimationFrame(check);
};
"""
# page -> who, the link to the page (None: the start page), the keys pressed in turn, what must be on screen
PAGES = {
    "annotate": ("ann", None, ("1", "2", "0"), ["rewrite"]),
    "adjudicate": ("rev", "Adjudicate", ("1", "2", "0"), ["rewrite"]),
    "review": ("rev", "Review", ("s", "r", "f"), ["rewrite", "response"]),
}


def _stats(samples: list[float]) -> dict[str, float]:
    if len(samples) < 2:
        return {"n": len(samples), "p50": round(samples[0], 1) if samples else 0.0,
                "p95": round(samples[0], 1) if samples else 0.0}
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"n": len(samples), "p50": round(statistics.median(samples), 1), "p95": round(cuts[94], 1)}


def _open(browser, url: str, which: str):  # type: ignore[no-untyped-def]
    name, link, _, marks = PAGES[which]
    context = browser.new_context()
    context.add_init_script(PROBE + f"window.__benchMarks = {json.dumps(marks)};")
    page = context.new_page()
    if which == "adjudicate":
        open_page(page, url, name=name, password=PASSWORD, link=link)
        page.wait_for_function("/^bench[a-z]*_\\d+_/.test(window.__benchHeading() || '')", timeout=180_000)
        return page
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")
    if link is not None:
        page.get_by_role("link", name=link).click()
        page.locator(f".aq-{which}").wait_for(timeout=180_000)
        page.locator(".aq-root:not(.aq-review)").wait_for(state="detached", timeout=180_000)
    page.wait_for_function("/^bench[a-z]*_\\d+_/.test(window.__benchHeading() || '')", timeout=180_000)
    return page


def _saved(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function("() => document.querySelector('.aq-indicator')?.innerText === 'saved'", timeout=180_000)


class _Commits(threading.Thread):
    """When each decision became visible in the database (committed), as seen by polling `sentdecision` every
    millisecond or two from another connection: wall-clock milliseconds by decision id."""

    def __init__(self, database: Path) -> None:
        super().__init__(daemon=True)
        self.database, self.seen, self.stop = database, {}, threading.Event()

    def run(self) -> None:
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        last = connection.execute("SELECT coalesce(max(rowid), 0) FROM sentdecision").fetchone()[0]
        while not self.stop.is_set():
            now = time.time() * 1000
            for rowid, decision_id in connection.execute("SELECT rowid, id FROM sentdecision WHERE rowid > ?",
                                                         (last,)):
                self.seen.setdefault(decision_id, now)
                last = max(last, rowid)
            time.sleep(0.001)
        connection.close()


def _presses(page, keys: tuple[str, ...], count: int, warmup: int, pause_ms: int,  # type: ignore[no-untyped-def]
             commits: _Commits | None = None) -> tuple[list[float], list[float], list[float]]:
    painted: list[float] = []
    for index in range(warmup + count):
        page.wait_for_timeout(pause_ms)
        page.evaluate("(old) => window.__benchWatch(old)", page.evaluate("window.__benchHeading()"))
        page.keyboard.press(keys[index % len(keys)])
        page.wait_for_function("window.__bench.painted !== null")
        if index >= warmup:
            painted.append(page.evaluate("window.__bench.painted - window.__bench.start"))
    _saved(page)
    decided = page.evaluate("Object.values(window.__bench.answered)")[warmup:]
    answers = [decision["answer"] - decision["key"] for decision in decided]
    seen = commits.seen if commits is not None else {}
    committed = [seen[decision["id"]] - decision["wall"] for decision in decided if decision["id"] in seen]
    return painted, answers, committed


def _labels(url: str, queue: str) -> list[tuple[int, int]]:
    """(candidate, human_check) of each of the person's decisions, in the order stored."""
    if queue == "adjudicate":
        with read_session(get_engine(url)) as session:
            rev = session.execute(select(Annotator.id).where(Annotator.name == "rev")).scalar_one()
            return [tuple(row) for row in session.execute(  # type: ignore[misc]
                select(AnnotationEvent.candidate_id, Adjudication.human_check)
                .join(Adjudication, Adjudication.candidate_id == AnnotationEvent.candidate_id)
                .where(AnnotationEvent.annotator_id == rev, AnnotationEvent.action == "adjudicate")
                .order_by(AnnotationEvent.id))]
    with read_session(get_engine(url)) as session:
        ann = session.execute(select(Annotator.id).where(Annotator.name == "ann")).scalar_one()
        return [tuple(row) for row in session.execute(  # type: ignore[misc]
            select(AnnotationEvent.candidate_id, func.coalesce(Annotation.human_check, -1))
            .join(Annotation, (Annotation.candidate_id == AnnotationEvent.candidate_id)
                  & (Annotation.annotator_id == AnnotationEvent.annotator_id))
            .where(AnnotationEvent.annotator_id == ann).order_by(AnnotationEvent.id))]


def _reviews(url: str) -> tuple[list[tuple[int, str]], list[int]]:
    """rev's reviews in the order stored (transcript, verdict), and the review queue in rev's order now."""
    with read_session(get_engine(url)) as session:
        rev = session.execute(select(Annotator.id).where(Annotator.name == "rev")).scalar_one()
        stored = session.execute(select(TranscriptEvent.transcript_id, Transcript.human)
                                 .join(Transcript, Transcript.id == TranscriptEvent.transcript_id)
                                 .where(TranscriptEvent.annotator_id == rev).order_by(TranscriptEvent.id)).all()
        return [tuple(row) for row in stored], review_queue(session, seed=rev)  # type: ignore[misc]


def _review_burst(page, url: str, keys: int, gap_ms: int) -> str:  # type: ignore[no-untyped-def]
    before, walk = _reviews(url)
    pressed = [PAGES["review"][2][i % 3] for i in range(keys)]
    for key in pressed:
        page.keyboard.press(key)
        time.sleep(gap_ms / 1000)
    _saved(page)
    stored = _reviews(url)[0][len(before):]
    # The unreviewed come first in the queue, in the order the page walks them.
    in_order = stored == [(walk[i], key.upper()) for i, key in enumerate(pressed)]
    return (f"{len(stored)} reviews on {len({tid for tid, _ in stored})} transcripts, "
            f"{'in the order pressed' if in_order else 'NOT in the order pressed'}")


def _burst(page, url: str, keys: int, gap_ms: int, queue: str) -> str:  # type: ignore[no-untyped-def]
    before = len(_labels(url, queue))
    first = page.evaluate("window.__benchHeading()")
    pressed = [PAGES["annotate"][2][i % 3] for i in range(keys)]
    for key in pressed:
        page.keyboard.press(key)
        time.sleep(gap_ms / 1000)
    _saved(page)
    stored = _labels(url, queue)[before:]
    candidates = [candidate for candidate, _ in stored]
    # Annotate's queue goes by id; the disputes by agreement (each decided once, the keys' decisions in turn).
    walked = candidates == sorted(candidates) if queue == "annotate" else len(set(candidates)) == len(candidates)
    in_order = walked and [check for _, check in stored] == [0 if key == "0" else 1 for key in pressed]
    return (f"{len(stored)} labels on {len(set(candidates))} candidates from {first.split(' · ')[0]}, "
            f"{'in the order pressed' if in_order else 'NOT in the order pressed'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--database", type=Path, help="SQLite file: seeded if missing, else reused")
    parser.add_argument("--presses", type=int, default=60, help="timed presses per distance")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--pause-ms", type=int, default=300, help="reading time before each press")
    parser.add_argument("--delay-ms", type=int, default=75, help="the proxy's delay, each way")
    parser.add_argument("--burst", type=int, default=20, help="keys in the burst")
    parser.add_argument("--gap-ms", type=int, default=20, help="between the burst's keys")
    parser.add_argument("--page", choices=list(PAGES), default="annotate", help="the queue page measured")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    workdir = Path(tempfile.mkdtemp(prefix="bench_queue_keys_"))
    database = args.database or workdir / "keys.sqlite"
    url = f"sqlite:///{database}"
    if not database.exists():
        started = time.perf_counter()
        seed(url, args.candidates)
        print(f"seeded {args.candidates:,} candidates in {time.perf_counter() - started:.0f} s", flush=True)
    app = start_app(url, workdir / "app.log")
    results: dict[str, dict[str, object]] = {}
    try:
        with sync_playwright() as playwright, DelayProxy(int(app.url.rsplit(":", 1)[1]),
                                                         delay=args.delay_ms / 1000) as proxy:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for distance, address, round_trip in (("near", app.url, 0), ("far", proxy.url, 2 * args.delay_ms)):
                page = _open(browser, address, args.page)
                commits = _Commits(database)
                commits.start()
                try:
                    painted, answered, committed = _presses(page, PAGES[args.page][2], args.presses, args.warmup,
                                                            args.pause_ms, commits)
                finally:
                    commits.stop.set()
                    commits.join()
                burst = (_review_burst(page, url, args.burst, args.gap_ms) if args.page == "review"
                         else _burst(page, url, args.burst, args.gap_ms, args.page))
                results[distance] = {"painted": _stats(painted), "answered": _stats(answered),
                                     "committed": _stats(committed),
                                     "round_trip_ms": round_trip, "burst": burst}
                page.context.close()
            browser.close()
    finally:
        stop_app(app)
    print(f"{database}, {args.page}: {args.presses} timed presses per distance after {args.warmup} warm-up, "
          f"{args.pause_ms} ms pause; far = a proxy holding each direction {args.delay_ms} ms")
    print(f"{'':>6} {'n':>4} {'painted p50':>12} {'p95':>6} {'committed p50':>14} {'p95':>6} "
          f"{'answered p50':>13} {'p95':>6} {'RTT+100':>8}")
    for distance, result in results.items():
        painted, committed, answered = result["painted"], result["committed"], result["answered"]
        print(f"{distance:>6} {painted['n']:>4} {painted['p50']:>12} {painted['p95']:>6} "  # type: ignore[index]
              f"{committed['p50']:>14} {committed['p95']:>6} "  # type: ignore[index]
              f"{answered['p50']:>13} {answered['p95']:>6} {int(result['round_trip_ms']) + 100:>8}")  # type: ignore[index, call-overload]
    for distance, result in results.items():
        print(f"burst {distance}: {args.burst} keys {args.gap_ms} ms apart: {result['burst']}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
