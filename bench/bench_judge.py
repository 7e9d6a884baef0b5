"""Judging 100,000 responses (`python -m annotator judge`'s work) against a plain loop over math-verify.

    python bench/bench_judge.py [--responses 100000] [--plain 5000] [--workers 2]

Set-up (untimed): the ReliableMath release imported into a real SQLite file; N responses spread over its 1,415
items (A and U), a realistic mix: about 1,500 characters of reasoning, then the boxed ground truth in its own
form or another (`\\dfrac`, a decimal, `$...$`), a wrong number, the original answer on an unsolvable item, the
reliable prompt's refusals (curly and straight apostrophes), or no boxed answer at all.

Timed:
- `judge_transcripts(engine, workers=W)`: read every response, judge it under both rule sets, write the verdicts
  back (executemany), W worker processes;
- the same judging of a sample in this process, one core (`verdicts.judge_jobs`), no database;
- the plain loop: `verify(parse(gold), parse(response))` per response of the same sample, math-verify's own
  timeouts off as ours are, one core.
Goal: `judge_transcripts` at least the plain loop's rate.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Transcript, utcnow  # noqa: E402
from annotator.import_export.formats import read  # noqa: E402
from annotator.import_export.importer import import_parts  # noqa: E402
from annotator.transcripts import Item, evaluation_items  # noqa: E402
from annotator.transcripts.judge import verdicts  # noqa: E402
from annotator.transcripts.judge.equivalence import gold_texts  # noqa: E402
from annotator.transcripts.judge.rules import Question  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "reliablemath"
FILLER = ("We consider the conditions one at a time. Let $x$ be the unknown; then $2x + 3 = 11$ gives $x = 4$, and "
          "substituting back we check each case. ")


def _alternative(truth: str) -> str:
    """The ground truth in another form a model might give."""
    if truth.isdigit():
        return f"{truth}.0" if int(truth) % 2 else f"${truth}$"
    return truth.replace("\\frac", "\\dfrac") if "\\frac" in truth else truth


def response_for(item: Item, rng: random.Random) -> str:
    truth = (gold_texts(item.ground_truth) or ["0"])[0]
    reasoning = FILLER * rng.randint(6, 18)
    roll = rng.random()
    if roll < 0.10:
        return reasoning + "I could not finish the computation."  # no boxed answer
    if roll < 0.20:
        return reasoning + "\\boxed{sorry, I don\u2019t know}" if rng.random() < 0.7 else reasoning + \
            "\\boxed{Sorry, I don't know}"
    if item.unsolvable and roll < 0.45:
        return reasoning + ("\\boxed{it\u2019s unsolvable}" if rng.random() < 0.8 else "\\boxed{It's unsolvable}")
    if roll < 0.65:
        return reasoning + f"Hence the answer is \\boxed{{{truth}}}."  # correct (the original, on a U item)
    if roll < 0.75:
        return reasoning + f"So \\boxed{{{_alternative(truth)}}}."
    return reasoning + f"Thus \\boxed{{{rng.randint(0, 999)}}}."  # a wrong number


def release_items(url: str) -> list[Item]:
    """The ReliableMath release imported into the database at `url`, and its evaluation items (A then U)."""
    import_parts(read(SHARED), engine=get_engine(url))
    with read_session(get_engine(url)) as session:
        return list(evaluation_items(session))


def insert_transcripts(url: str, rows: list[dict[str, object]]) -> None:
    with write_session(get_engine(url)) as session:
        for start in range(0, len(rows), 5000):
            session.connection().execute(insert(Transcript.__table__), rows[start : start + 5000])


def seed(url: str, responses: int) -> list[tuple[int, str, Question]]:
    items = release_items(url)
    rng = random.Random(0)
    now = utcnow()
    rows, jobs = [], []
    for index in range(responses):
        item = items[index % len(items)]
        text = response_for(item, rng)
        rows.append({"data_id": item.data_id, "problem_id": item.problem_id, "candidate_id": item.candidate_id,
                     "model": f"model-{index // len(items) % 7}", "prompt": "reliable",
                     "sample": index // (len(items) * 7), "response": text, "source": "bench", "created_at": now})
        jobs.append((index + 1, text, verdicts.question_of(item)))
    insert_transcripts(url, rows)
    return jobs


def plain_loop(jobs: list[tuple[int, str, Question]]) -> float:
    from math_verify import parse, verify

    start = time.perf_counter()
    for _, text, question in jobs:
        gold = parse(str(question.ground_truth), parsing_timeout=None)
        verify(gold, parse(text, parsing_timeout=None), timeout_seconds=None)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--plain", type=int, default=5000, help="sample size for the one-core loops")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'judge.sqlite'}"
        jobs = seed(url, args.responses)
        sample = random.Random(1).sample(jobs, min(args.plain, len(jobs)))
        plain = plain_loop(sample)
        start = time.perf_counter()
        verdicts.judge_jobs("reliablemath", sample)
        one_core = time.perf_counter() - start
        summary = verdicts.judge_transcripts(get_engine(url), workers=args.workers)
    ours = summary.seconds
    print(f"{args.responses:,} responses over 1,415 items, {os.cpu_count()} cores, {args.workers} workers")
    print(f"  plain loop verify(parse(gold), parse(response)), {len(sample):,} sampled: "
          f"{plain:.1f} s = {len(sample) / plain:,.0f} responses/s")
    print(f"  judge_jobs in this process, same sample, both rule sets: {one_core:.1f} s = "
          f"{len(sample) / one_core:,.0f} responses/s")
    rate = summary.judged / ours
    print(f"  judge_transcripts, all {summary.judged:,} (read, judge, write back): {ours:.1f} s = "
          f"{rate:,.0f} responses/s = {rate / (len(sample) / plain):.1f}x the plain loop")
    print(f"  verdicts {dict(summary.verdicts)}, classes {dict(summary.classes)}, "
          f"rules disagree {summary.rules_disagree:,}, timed out {summary.timed_out}")


if __name__ == "__main__":
    main()
