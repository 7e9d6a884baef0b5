"""Team's figures on a big database: the counts kept by the database (`labelday`), the coefficients in a child process.

    python bench/bench_team_figures.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY [--against REV]

Run it on a copy of the 1M data set (`bench/scale_data.py`), never on the template. This process plays the app
server (the pages' Snapshots, `app_pages/team.py`'s calls); it reports:
- Team's counts (`pages.TEAM`: activity, gold accuracy) computed, median of 3;
- Team's first open on a fresh database (no figures stored): the counts computed, the coefficients' child started,
  what the page's run waits for; then how long the child took to store the coefficients;
- 20 labels saved one by one as keypresses save them (annotator `ann`), then how long until a look (the page's
  `get`, its patience) shows all 20 in her count;
- a look at stale coefficients while their child recomputes them;
- the peak memory (max RSS) of this process (the app server's share) and of the largest child;
- with `--against REV`: the coefficients' child alone (`python -m annotator.figures.child`, computing and storing),
  this checkout's and REV's in turns (`--rounds` each, REV's first in every other round), each's wall time, CPU
  time (user + system) and peak memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import delete, select  # noqa: E402

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Annotation, Annotator, Candidate, FigureSnapshot  # noqa: E402
from annotator.figures import child, pages  # noqa: E402
from annotator.figures.snapshots import Snapshot  # noqa: E402
from annotator.labelling import labels  # noqa: E402

TTL = 30  # app_pages/team.py's TTL_SECONDS
PRESSES = 20


def _megabytes(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _servers(engine) -> tuple[Snapshot, Snapshot]:  # type: ignore[no-untyped-def]
    """The Team page's two Snapshots, as one app server holds them."""
    return (Snapshot(engine, pages.TEAM, ttl=TTL),
            Snapshot(engine, pages.TEAM_AGREEMENT, ttl=TTL, process="annotator.figures.pages:TEAM_AGREEMENT"))


def _unlabelled(engine, person: int, count: int) -> list[int]:  # type: ignore[no-untyped-def]
    with read_session(engine) as session:
        labelled = select(Annotation.candidate_id).where(Annotation.annotator_id == person)
        return list(session.execute(select(Candidate.id).where(Candidate.id.not_in(labelled))
                                    .order_by(Candidate.id).limit(count)).scalars())


def _checkout(revision: str, directory: Path) -> Path:
    """The repository's files at `revision`, unpacked into `directory`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    return directory


def _child_alone(url: str, code: Path) -> tuple[float, float, float]:
    """The coefficients' child of the code in `code`, run as the app server runs it: its wall and CPU seconds and
    its peak memory (MB)."""
    environment = {**os.environ, child.URL_VARIABLE: url, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "annotator.figures.child",
                                "annotator.figures.pages:TEAM_AGREEMENT", f"bench-{code.name}"], env=environment,
                               cwd=code)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"the child of {code} failed (status {status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _a_b(url: str, against: str, rounds: int) -> None:
    """This checkout's child and `against`'s, in turns."""
    with tempfile.TemporaryDirectory() as directory:
        sides = {"this checkout": ROOT, against: _checkout(against, Path(directory))}
        measured: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
        for round_ in range(rounds):
            for name in (list(sides) if round_ % 2 else list(sides)[::-1]):
                measured[name].append(_child_alone(url, sides[name]))
                wall, cpu, peak = measured[name][-1]
                print(f"  {name}'s child: {wall:.1f} s, CPU {cpu:.1f} s, peak {peak:.0f} MB (load "
                      f"{os.getloadavg()[0]:.1f})", flush=True)
    for name, runs in measured.items():
        print(f"{name}'s child, median of {rounds}: {statistics.median(r[0] for r in runs):.1f} s, CPU "
              f"{statistics.median(r[1] for r in runs):.1f} s, peak {max(r[2] for r in runs):.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--against", metavar="REV", help="also run the coefficients' child of this git revision")
    parser.add_argument("--rounds", type=int, default=3, help="with --against: children of each side (default 3)")
    args = parser.parse_args()
    engine = get_engine(args.url)
    load = [" ".join(f"{v:.1f}" for v in os.getloadavg())]

    computed = []
    for _ in range(3):
        start = time.perf_counter()
        with read_session(engine) as session:
            pages.TEAM.compute(session)
        computed.append(time.perf_counter() - start)
    print(f"Team's counts computed: median {statistics.median(computed):.3f} s of {[round(t, 3) for t in computed]}",
          flush=True)

    with write_session(engine) as session:  # a fresh database: nothing stored
        session.execute(delete(FigureSnapshot).where(FigureSnapshot.key.in_(["team", "team_agreement"])))
    counts, agreement = _servers(engine)
    start = time.perf_counter()
    counts.get()
    first = agreement.latest()
    opened = time.perf_counter() - start
    print(f"Team's first open, nothing stored: {opened:.3f} s (coefficients shown: {first.value is not None})",
          flush=True)
    agreement.wait()
    print(f"the child stored the coefficients {time.perf_counter() - start:.1f} s after the open", flush=True)

    with read_session(engine) as session:
        ann = session.execute(select(Annotator.id).where(Annotator.name == "ann")).scalar_one()
    before = counts.get().value["activity"].get("ann", {}).get("labels", 0)
    for candidate_id in _unlabelled(engine, ann, PRESSES):
        with write_session(engine) as session:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=ann, human_check=1,
                                difficulty_eval=0, seconds_spent=4.0)
    saved = time.perf_counter()
    reading = counts.get()  # the page opened (or its tick) right after the last label
    while reading.value["activity"].get("ann", {}).get("labels", 0) < before + PRESSES:
        time.sleep(0.05)  # a tick's look, finer than the page's 2 s
        reading = counts.peek()
    shown = time.perf_counter() - saved
    print(f"{PRESSES} labels saved one by one: in Team's stored counts {shown:.3f} s after the last (the open page "
          f"shows them at its next tick, at most 2 s later)", flush=True)

    start = time.perf_counter()
    stale = agreement.latest()
    look = time.perf_counter() - start
    agreement.wait()
    print(f"a look at stale coefficients: {look:.3f} s (being recomputed: {stale.refreshing}); their child took "
          f"{time.perf_counter() - start:.1f} s")
    load.append(" ".join(f"{v:.1f}" for v in os.getloadavg()))
    print(f"peak memory: this process (the app server's part) {_megabytes(resource.RUSAGE_SELF):.0f} MB, the largest "
          f"child {_megabytes(resource.RUSAGE_CHILDREN):.0f} MB; load before {load[0]}, after {load[1]}", flush=True)
    if args.against:
        _a_b(args.url, args.against, args.rounds)


if __name__ == "__main__":
    main()
