"""A reviewer's keypress on Adjudicate while another person opens stale Team and Report pages, against the same
keypress with nobody else on the server, in one run.

    python bench/bench_figures_keypress.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY

Run it on a copy of the 1M data set (`bench/scale_data.py`). One `streamlit run app.py`; the reviewer `rev` on
Adjudicate presses 1 / 2 / 0 (`bench_queue_keys.py`'s in-page probe: keydown to the frame painted with the next
dispute, and keydown to the decision's answer from the server). Every decision moves Team's and Report's
fingerprints, so each open of those pages finds their figures stale and starts their recomputation (Team's counts in
the server, its coefficients and Report's figures in a child process). The viewer, `admin` in a second Chromium of
its own process, opens Team then Report, over and over, while its flag file exists. Blocks of presses alternate,
viewer off then on, so that load from other jobs falls on both alike. Reported: p50 and p95 of each (painted, and
answered: the browser holds the next disputes, so what the server's load delays is the answer), their ratio, and the
app server's peak memory (its own process; the children are not in it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_queue_keys import PAGES, _open, _presses, _stats  # noqa: E402
from bench.keys_data import PASSWORD  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, open_page, start_app, stop_app  # noqa: E402

# Each browser stands for a computer of its own: on this one machine the annotator's would wait for the cores the
# server, its children and the database take, and the viewer's drawing of Team's and Report's charts would take the
# annotator's. With the annotator's browser first in the CPU's queue and the viewer's last, what the viewer adds is
# the server's share: the renders, the figures' children, the database's aggregates (`--scheduling niceness` with
# `--browser-nice` and `--viewer-nice` 0 measure them all on one computer). Chromium sets its processes' and threads'
# niceness itself (its renderers 0 or 5, its GPU process and input threads -8, whatever it was started at), so each
# browser's threads are held at theirs while it runs (`_Held`); and a niceness orders the CPU's shares, not who runs
# first when a thread wakes, which a frame's chain of threads does many times: by default ("round-robin") the
# annotator's threads are in the real-time round-robin class (needs root). (The viewer's are not put in the idle
# class: on a busy machine it leaves them no time at all, and the viewer's pages would not open.)
BROWSER_NICENESS = -10
VIEWER_NICENESS = 19


def _children() -> dict[int, list[int]]:
    """Each process's children (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    return children


def _descendants(children: dict[int, list[int]], root: int) -> set[int]:
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


class _Held(threading.Thread):
    """Every thread of the Chromium processes under this process (but those under `apart`) held at `niceness` and,
    with `first`, in the real-time round-robin class; looked at every fifth of a second until `stop` is set."""

    def __init__(self, niceness: int, first: bool = False, apart: tuple[int, ...] = ()) -> None:
        super().__init__(daemon=True)
        self.niceness, self.first, self.apart, self.stop = niceness, first, apart, threading.Event()
        self.refused: set[str] = set()  # what the system did not allow (without root): said in the summary

    def run(self) -> None:
        while not self.stop.wait(0.2):
            children = _children()
            others = set().union(*(_descendants(children, pid) | {pid} for pid in self.apart))
            for pid in _descendants(children, os.getpid()) - others:
                try:
                    if not any(name in Path(f"/proc/{pid}/comm").read_text() for name in ("chrom", "headless")):
                        continue
                    for task in Path(f"/proc/{pid}/task").iterdir():
                        self.hold(int(task.name))
                except OSError:  # gone meanwhile
                    continue

    def hold(self, thread: int) -> None:
        try:
            if os.getpriority(os.PRIO_PROCESS, thread) != self.niceness:
                os.setpriority(os.PRIO_PROCESS, thread, self.niceness)
        except PermissionError:
            self.refused.add(f"niceness {self.niceness}")
        try:
            if self.first and os.sched_getscheduler(thread) != os.SCHED_RR:
                os.sched_setscheduler(thread, os.SCHED_RR, os.sched_param(1))
        except PermissionError:
            self.refused.add("the round-robin class")


def view(url: str, flag: Path, idle: Path) -> None:
    """The viewer: Team then Report, again and again while `flag` exists; without it, `idle` is written between
    rounds. It ends when the folder of both goes."""
    from playwright.sync_api import sync_playwright

    from tests.support.navigation import go

    held = _Held(os.getpriority(os.PRIO_PROCESS, 0))
    held.start()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        page.set_default_timeout(600_000)
        opened = 0
        while flag.parent.exists():
            if not flag.exists():
                if opened:  # away from the pages, whose ticks would start recomputations
                    page.close()
                    page = browser.new_page()
                    page.set_default_timeout(600_000)
                    opened = 0
                    print("viewer: idle", file=sys.stderr, flush=True)
                idle.touch()
                time.sleep(0.2)
                continue
            # Each page's last words: the run is over (Report's judges' table is its end).
            for link, shown in (("Team", "People"), ("Report", "Pick the judge whose kappa is highest")):
                if opened:
                    go(page, link)
                else:
                    open_page(page, url, name="admin", password=PASSWORD, link="Team")
                page.get_by_text(shown).first.wait_for()
                opened += 1
                print(f"viewer: {link} open {opened}", file=sys.stderr, flush=True)
    held.stop.set()


def _quiet(engine, idle: Path) -> None:  # type: ignore[no-untyped-def]
    """Wait (untimed) until the viewer is idle and no figures are being recomputed: nobody else on the server."""
    from sqlalchemy import func, select

    from annotator.database.engine import read_session
    from annotator.database.models import FigureSnapshot, utcnow

    idle.unlink(missing_ok=True)
    while not idle.exists():
        time.sleep(0.2)
    while True:
        with read_session(engine) as session:
            if not session.execute(select(func.count()).where(FigureSnapshot.lease_until > utcnow())).scalar():
                return
        time.sleep(0.5)


def _peak_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--presses", type=int, default=10, help="timed presses per block")
    parser.add_argument("--rounds", type=int, default=3, help="blocks alone and with the viewer, alternating")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--pause-ms", type=int, default=300)
    parser.add_argument("--browser-nice", type=int, default=BROWSER_NICENESS,
                        help="the annotator's Chromium's niceness (below 0 needs root)")
    parser.add_argument("--viewer-nice", type=int, default=VIEWER_NICENESS, help="the viewer's Chromium's niceness")
    parser.add_argument("--scheduling", choices=("round-robin", "niceness"), default="round-robin",
                        help="round-robin: the annotator's Chromium in the real-time round-robin class (needs root), "
                             "besides the browsers' niceness; niceness: their niceness only")
    parser.add_argument("--viewer", nargs=3, metavar=("APP_URL", "FLAG", "IDLE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.viewer:
        view(args.viewer[0], Path(args.viewer[1]), Path(args.viewer[2]))
        return

    from playwright.sync_api import sync_playwright

    from annotator.database.engine import get_engine

    workdir = Path(tempfile.mkdtemp(prefix="bench_figures_keypress_"))
    signals = workdir / "signals"
    signals.mkdir()
    flag, idle = signals / "viewing", signals / "idle"
    engine = get_engine(args.url)
    app = start_app(args.url, workdir / "app.log")
    load = [" ".join(f"{v:.1f}" for v in os.getloadavg())]
    samples: dict[str, list[float]] = {"alone": [], "viewer": [], "alone, answered": [], "viewer, answered": []}
    viewer = None
    try:
        flag.touch()  # the first round computes what is not stored yet (untimed)
        viewer = subprocess.Popen([sys.executable, __file__, "--url", args.url, "--viewer", app.url, str(flag),
                                   str(idle)], cwd=ROOT,
                                  preexec_fn=lambda: os.setpriority(os.PRIO_PROCESS, 0, args.viewer_nice))
        os.setpriority(os.PRIO_PROCESS, 0, args.browser_nice)  # after the server and the viewer started: for Chromium
        held = _Held(args.browser_nice, args.scheduling == "round-robin", apart=(viewer.pid, app.process.pid))
        held.start()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = _open(browser, app.url, "adjudicate")
            keys = PAGES["adjudicate"][2]
            _presses(page, keys, 0, args.warmup, args.pause_ms)
            for _ in range(args.rounds):
                for who in ("alone", "viewer"):
                    if who == "alone":
                        flag.unlink(missing_ok=True)
                        _quiet(engine, idle)
                    else:
                        flag.touch()
                    painted, answered, _ = _presses(page, keys, args.presses, 0, args.pause_ms)
                    samples[who].extend(painted)
                    samples[f"{who}, answered"].extend(answered)
            browser.close()
        held.stop.set()
        peak = _peak_mb(app.process.pid)
    finally:
        flag.unlink(missing_ok=True)
        idle.unlink(missing_ok=True)
        signals.rmdir()
        if viewer is not None:
            viewer.wait(timeout=900)
        stop_app(app)
    load.append(" ".join(f"{v:.1f}" for v in os.getloadavg()))
    results = {who: _stats(values) for who, values in samples.items()}
    first = ", the annotator's in the round-robin class" if args.scheduling == "round-robin" else ""
    if held.refused:
        first += f" (not allowed here: {', '.join(sorted(held.refused))})"
    print(f"{args.url.rsplit('@', 1)[-1]}: Adjudicate keypress, {args.rounds} x {args.presses} presses each way; "
          f"browsers at niceness {args.browser_nice} (annotator), {args.viewer_nice} (viewer){first}; "
          f"load before {load[0]}, after {load[1]}")
    for who, values in results.items():
        print(f"{who:>7}: p50 {values['p50']} ms, p95 {values['p95']} ms")
    for kind in ("", ", answered"):
        viewer, alone = results[f"viewer{kind}"], results[f"alone{kind}"]
        print(f"p95{kind} with the viewer / alone: {viewer['p95'] / alone['p95']:.2f}; p50: "
              f"{viewer['p50'] / alone['p50']:.2f}")
    print(f"app server peak memory {peak:.0f} MB")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
