"""How long the Review page's database work takes with many transcripts (SQLite file, WAL).

- the queue (`review_queue`, run when the page opens or a filter changes) against the floor of fetching the
  same five columns of every transcript with no ordering;
- one review keypress (`record_review` + `load_review` of the next, one write transaction) against the floor
  of one write transaction that updates one transcript row.

Usage: python bench/bench_review.py [--transcripts 100000] [--repeat 5] [--presses 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert, select, update

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Problem, Transcript, utcnow  # noqa: E402
from annotator.transcripts import load_review, record_review, review_queue  # noqa: E402
from tests.support.candidates import add_user  # noqa: E402

CLASSES = ["incorrect"] * 6 + ["unsolvable"] * 2 + ["unknown", "unmatched"]


def fill(engine, count: int) -> None:  # type: ignore[no-untyped-def]
    now = utcnow()
    with write_session(engine) as session:
        session.execute(insert(Problem), [{"data_source": "math", "position": i, "question": f"Find $x_{i}$.",
                                           "ground_truth": str(i), "created_at": now} for i in range(count // 4)])
        problem_ids = session.execute(select(Problem.id).order_by(Problem.id)).scalars().all()
        rows = []
        for i in range(count):
            judge_class = CLASSES[i % len(CLASSES)] if i % 97 else None
            rows.append({
                "data_id": f"math_{i % len(problem_ids)}", "problem_id": problem_ids[i % len(problem_ids)],
                "model": f"model-{i % 4}", "prompt": "standard", "sample": i, "response": "So \\boxed{4}." * 20,
                "extracted_answer": "4", "judge_class": judge_class,
                "judge": {"unsolvable": "F", "unknown": "R"}.get(judge_class or "", "F") if judge_class else None,
                "rules_disagree": i % 211 == 0, "source": "bench", "created_at": now,
            })
        session.execute(insert(Transcript), rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcripts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--presses", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    engine = get_engine(f"sqlite:///{folder / 'bench.sqlite'}")
    fill(engine, args.transcripts)
    reviewer = add_user(engine, "rev", role="reviewer")

    queue_times, floor_times = [], []
    for _ in range(args.repeat):
        with read_session(engine) as session:
            start = time.perf_counter()
            cursor = session.connection().connection.driver_connection.cursor()
            cursor.execute("SELECT id, rules_disagree, judge_class, judge, human FROM transcript")
            cursor.fetchall()
            floor_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            queue = review_queue(session, seed=reviewer.id)
            queue_times.append(time.perf_counter() - start)
    queue_s, floor_s = statistics.median(queue_times), statistics.median(floor_times)
    print(f"{args.transcripts:,} transcripts, median of {args.repeat}")
    print(f"queue: {queue_s * 1000:.1f} ms; floor (driver fetchall of the same columns): {floor_s * 1000:.1f} ms; "
          f"ratio {queue_s / floor_s:.2f}x")

    press_times, write_floor = [], []
    for i in range(args.presses):
        start = time.perf_counter()
        with write_session(engine) as session:
            session.execute(update(Transcript).where(Transcript.id == queue[-1 - i]).values(comment=None))
        write_floor.append(time.perf_counter() - start)
        start = time.perf_counter()
        with write_session(engine) as session:
            record_review(session, transcript_id=queue[i], annotator_id=reviewer.id, verdict="SRF"[i % 3],
                          tags=["arithmetic error"] if i % 2 else [], comment=None)
            load_review(session, transcript_id=queue[i + 1])
        press_times.append(time.perf_counter() - start)
    press_ms, floor_ms = statistics.median(press_times) * 1000, statistics.median(write_floor) * 1000
    print(f"review keypress (record + load the next), median of {args.presses}: {press_ms:.2f} ms; "
          f"floor (one-row update transaction): {floor_ms:.2f} ms; ratio {press_ms / floor_ms:.2f}x")


if __name__ == "__main__":
    main()
