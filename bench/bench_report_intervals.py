"""`report --json` with its intervals over a leaderboard: 20 models x 2 prompts x the release's 1,415 items
(56,600 transcripts), one sample each.

    python bench/bench_report_intervals.py [--models 20] [--repeat 5] [--bootstrap 2000]

Set-up (untimed): the ReliableMath release imported into a real SQLite file; one transcript per model, prompt and
item, with a judge verdict drawn per model (each model its own S/R/F rates) and a human verdict on 2%, inserted
with Core executemany. Timed, warm (the file in the OS cache, the interpreter started): `report()` as the CLI
calls it with `resamples=0` and with the bootstrap's resamples: with one sample per item both give Prec and Prud
MOVER's interval (Wilson and MOVER are in both; the bootstrap runs only for items with several samples), so the
difference is what asking for resamples costs there; and the whole command, `python -m annotator report
--json`, in a fresh interpreter (start-up and imports included). `report --compare` of two models too. Medians
of --repeat. Goal: `report` under 1 s warm.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.database.models import utcnow  # noqa: E402
from annotator.transcripts.report.counting import verdict_groups  # noqa: E402
from annotator.transcripts.report.scores import report, tallies  # noqa: E402
from annotator.transcripts.report.uncertainty import compare  # noqa: E402
from bench.bench_judge import insert_transcripts, release_items  # noqa: E402

PROMPTS = ("standard", "reliable")


def seed(url: str, models: int) -> int:
    items = release_items(url)
    rng = random.Random(0)
    now = utcnow()
    rows = []
    for m in range(models):
        rates = [rng.random() for _ in "SRF"]
        for prompt in PROMPTS:
            for item in items:
                rows.append({
                    "data_id": item.data_id, "problem_id": item.problem_id, "candidate_id": item.candidate_id,
                    "model": f"model-{m:02d}", "prompt": prompt, "sample": 0, "response": "\\boxed{1}",
                    "source": "bench", "created_at": now, "judge_rule": "reliablemath", "judge_version": "1",
                    "judge_class": "correct", "judge": rng.choices("SRF", rates)[0], "rules_disagree": False,
                    "human": rng.choice("SRF") if rng.random() < 0.02 else None,
                })
    insert_transcripts(url, rows)
    return len(rows)


def timed(function, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'report.sqlite'}"
        count = seed(url, args.models)
        engine = get_engine(url)

        def run(resamples: int) -> list[dict[str, object]]:
            with read_session(engine) as session:
                return report(session, resamples=resamples)

        rows = run(args.bootstrap)  # warm-up: the file in the OS cache, numpy loaded
        assert len(rows) == args.models * len(PROMPTS) and all(row["prec_ci"] for row in rows)
        plain = timed(lambda: run(0), args.repeat)
        full = timed(lambda: run(args.bootstrap), args.repeat)
        with read_session(engine) as session:
            groups = verdict_groups(session)
        pooled = tallies(groups)
        first, second = pooled[("model-00", "reliable")].items, pooled[("model-01", "reliable")].items
        paired = timed(lambda: compare(first, second, resamples=args.bootstrap), args.repeat)
        env = {**os.environ, "ANNOTATOR_DATABASE_URL": url}
        command = [sys.executable, "-m", "annotator", "report", "--json", "--bootstrap", str(args.bootstrap)]
        subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True)
        cli = timed(lambda: subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True),
                    args.repeat)
        start_up = timed(lambda: subprocess.run([sys.executable, "-c", "import numpy, sqlalchemy, sqlmodel"],
                                                check=True), args.repeat)
    print(f"report over {count:,} transcripts ({args.models} models x {len(PROMPTS)} prompts x 1,415 items), "
          f"{len(rows)} rows, median of {args.repeat}, warm")
    print(f"  report(), --bootstrap 0 (read + counts + Wilson + MOVER): {plain:.3f} s")
    print(f"  report(), --bootstrap {args.bootstrap:,} (one sample per item: MOVER again): {full:.3f} s "
          f"(difference {full - plain:.3f} s)")
    print(f"  compare() of two models (Newcombe's paired intervals + MOVER + McNemar): {paired * 1000:.1f} ms")
    print(f"  python -m annotator report --json (fresh interpreter): {cli:.2f} s; "
          f"interpreter + numpy/sqlalchemy/sqlmodel imports alone: {start_up:.2f} s (goal: report < 1 s)")


if __name__ == "__main__":
    main()
