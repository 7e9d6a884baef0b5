"""`python -m annotator agreement`'s work over N candidates with 3 labels each, on a real SQLite file.

    python bench/bench_agreement.py [--candidates 100000] [--annotators 12] [--repeat 3]

Set-up (untimed): N candidates and 3 labels each from annotators drawn at random (about 80% human_check = 1),
inserted with Core executemany. Timed, in this process: reading the labels (`labels.label_rows`) and computing
every coefficient for human_check and difficulty_eval (`metrics.label_agreement`). Goal: under 2 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Annotation, Annotator, Candidate, utcnow  # noqa: E402
from annotator.figures.agreement import label_agreement  # noqa: E402
from annotator.labelling.labels import label_rows  # noqa: E402
from tests.support.candidates import add_candidates  # noqa: E402


def seed(url: str, candidates: int, annotators: int) -> None:
    engine = get_engine(url)
    add_candidates(engine, candidates, data_source="bench")
    rng = random.Random(0)
    now = utcnow()
    with write_session(engine) as session:
        session.execute(insert(Annotator), [{"name": f"a{i}", "role": "annotator"} for i in range(annotators)])
        people = list(session.execute(select(Annotator.id)).scalars())
        ids = list(session.execute(select(Candidate.id)).scalars())
        rows = []
        for candidate_id in ids:
            for annotator_id in rng.sample(people, 3):
                accepted = rng.random() < 0.8
                rows.append({
                    "candidate_id": candidate_id, "annotator_id": annotator_id, "human_check": int(accepted),
                    "difficulty_eval": rng.randint(0, 1) if accepted else None,
                    "seconds_spent": rng.uniform(5, 120), "created_at": now, "updated_at": now,
                })
        session.connection().execute(insert(Annotation.__table__), rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'agreement.sqlite'}"
        seed(url, args.candidates, args.annotators)
        engine = get_engine(url)
        reading, computing = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            with read_session(engine) as session:
                rows = label_rows(session)
            middle = time.perf_counter()
            report = label_agreement(rows)
            reading.append(middle - start)
            computing.append(time.perf_counter() - middle)
    total = [r + c for r, c in zip(reading, computing)]
    print(f"{args.candidates:,} candidates x 3 labels ({len(rows):,} labels), {args.annotators} annotators, "
          f"median of {args.repeat}")
    print(f"  read labels {statistics.median(reading):.2f} s, compute {statistics.median(computing):.2f} s, "
          f"total {statistics.median(total):.2f} s (goal < 2 s)")
    print(f"  human_check alpha {report['human_check']['alpha']:.3f}, pairs {len(report['human_check']['pairwise'])}")


if __name__ == "__main__":
    main()
