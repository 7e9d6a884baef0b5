"""Collecting transcripts (issue 10): an evaluate run vs a bare `AsyncOpenAI` client sending the same requests.

    python bench/bench_evaluate.py [--items 3000] [--concurrency 32] [--latency 0.1] [--rounds 2]

The endpoint is tests/support/openai_server.py in its own process, answering every request after a fixed
latency (default 100 ms). Each round, back to back against the same server (which goes first alternates):

- bare: one `openai.AsyncOpenAI` client, `chat.completions.create` for every item's messages (the same
  ReliableMath reliable-prompt messages the run sends), `--concurrency` at a time (a semaphore); answers kept
  in memory only.
- evaluate: `run_evaluation` with `--concurrency`, on a fresh SQLite database: every request through the call
  cache, every answer committed to the cache and kept as a transcript.

Goal: evaluate >= 0.9 x the bare client's requests per second (the ratio of the two in the same round).
Then the same run again, with every transcript collected: nothing sent (its time is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import openai  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.database.models import Problem, utcnow  # noqa: E402
from annotator.runs.llm import RoleConfig  # noqa: E402
from annotator.transcripts.collect.evaluate import run_evaluation  # noqa: E402
from annotator.transcripts.collect.options import EvaluateOptions  # noqa: E402
from annotator.transcripts.collect.prompts import messages  # noqa: E402


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--latency", str(latency)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def question(i: int) -> str:
    return f"Problem {i}: a train travels {10 + i} km in {i % 5 + 1} hours. What is its speed in km/h?"


def add_items(engine: object, count: int) -> None:
    now = utcnow()
    with write_session(engine) as session:  # type: ignore[arg-type]
        session.execute(insert(Problem), [
            {"data_source": "bench", "position": i, "source_id": i, "question": question(i),
             "ground_truth": str(i), "created_at": now}
            for i in range(count)
        ])


async def bare(url: str, count: int, concurrency: int) -> float:
    """Seconds for a bare AsyncOpenAI client to get every answer, `concurrency` requests at a time."""
    client = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=60)
    slots = asyncio.Semaphore(concurrency)
    answers: list[str | None] = []

    async def ask(i: int) -> None:
        async with slots:
            response = await client.chat.completions.create(
                model="m-x", messages=messages(question(i), prompt="reliable"), temperature=0.0,  # type: ignore[arg-type]
            )
            answers.append(response.choices[0].message.content)

    started = time.perf_counter()
    await asyncio.gather(*(ask(i) for i in range(count)))
    seconds = time.perf_counter() - started
    await client.close()
    assert len(answers) == count
    return seconds


def evaluate(url: str, count: int, concurrency: int, tmp: str, round_: int) -> tuple[float, float]:
    """Seconds of an evaluate run on a fresh database, and of the same run again (everything collected)."""
    engine = get_engine(f"sqlite:///{Path(tmp) / f'bench-{round_}.sqlite'}")
    add_items(engine, count)
    options = EvaluateOptions(
        model=RoleConfig(model="m-x", base_url=url, api_key_env="BENCH_UNSET_KEY", timeout=60.0),
        prompt="reliable", concurrency=concurrency,
    )
    run = run_evaluation(engine, options=options)
    assert run.status == "succeeded" and run.written == count, run.errors
    assert run.calls["requests"] == count and run.calls["retries"] == 0, run.calls
    again = run_evaluation(engine, options=options)
    assert again.calls["requests"] == 0 and again.skipped == count
    engine.dispose()
    return run.seconds, again.seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    server, url = start_server(args.latency)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for round_ in range(args.rounds):
                # Which goes first alternates, so that neither always meets a warmer (or busier) machine.
                if round_ % 2:
                    run_seconds, again_seconds = evaluate(url, args.items, args.concurrency, tmp, round_)
                    bare_seconds = asyncio.run(bare(url, args.items, args.concurrency))
                else:
                    bare_seconds = asyncio.run(bare(url, args.items, args.concurrency))
                    run_seconds, again_seconds = evaluate(url, args.items, args.concurrency, tmp, round_)
                rows.append((bare_seconds, run_seconds, again_seconds))
    finally:
        server.terminate()
        server.wait()

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.system()} {platform.release()}, load average {os.getloadavg()[0]:.1f}")
    print(f"endpoint latency {args.latency * 1000:.0f} ms/request; {args.items} items; --concurrency "
          f"{args.concurrency} (ideal {args.concurrency / args.latency:.0f} req/s)")
    ratios = []
    for round_, (bare_seconds, run_seconds, again_seconds) in enumerate(rows, 1):
        bare_rate, run_rate = args.items / bare_seconds, args.items / run_seconds
        ratios.append(run_rate / bare_rate)
        print(f"round {round_}: bare AsyncOpenAI {bare_seconds:.2f}s = {bare_rate:.1f} req/s; evaluate "
              f"{run_seconds:.2f}s = {run_rate:.1f} req/s (call cache + transcripts in SQLite) = "
              f"{ratios[-1]:.2f}x; re-run with everything collected {again_seconds:.2f}s, 0 requests")
    ratio = statistics.median(ratios)
    print(f"evaluate / bare: median {ratio:.2f}x (goal >= 0.9x: {'met' if ratio >= 0.9 else 'NOT met'})")


if __name__ == "__main__":
    main()
