"""LLM construction (issue 4): concurrent pipeline vs a sequential reference-style baseline, and a cached re-run.

    python bench/bench_generate.py [--problems 500] [--baseline-problems 20] [--concurrency 32] [--latency 0.1]

The endpoint is tests/support/openai_server.py in its own process, answering every request after a fixed
latency (default 100 ms) with scripted construction answers (one condition per problem, so 11 requests per
problem: extraction, 2 rewrites, 2 + 2 verifications, 2 rewritten_condition + 2 unsolvable_reason).

- baseline: the reference code's way: one request at a time, a new (sync) OpenAI client per call, no cache,
  same prompts and parsing (the pipeline's steps driven through a client that blocks); on the first
  `--baseline-problems` problems, as requests per second.
- concurrent: `run_generation` with `--concurrency`, writing candidates and the call cache to SQLite.
- cached: the same run again; every answer from the call cache, every candidate unchanged (so not written).

Goal: concurrent >= 0.9 x concurrency x baseline throughput; cached < 5% of the concurrent run's time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import openai  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from annotator.construction.pipeline import GenerateOptions, load_prompts, run_generation  # noqa: E402
from annotator.construction.pipeline.drafts import ProblemInput  # noqa: E402
from annotator.construction.pipeline.steps import Pipeline  # noqa: E402
from annotator.database.engine import get_engine, read_session, write_session  # noqa: E402
from annotator.database.models import Candidate, Problem  # noqa: E402
from annotator.runs.llm import Completion, RoleConfig, call_key  # noqa: E402
from annotator.runs.llm import parse_completion as _completion  # noqa: E402

REQUESTS_PER_PROBLEM = 11


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--latency", str(latency), "--conditions", "1"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def add_problems(engine: Any, count: int) -> None:
    with write_session(engine) as session:
        session.add_all(
            Problem(data_source="bench", position=i, source_id=i, ground_truth=str(i * 7),
                    question=f"Problem {i}: a train travels {10 + i} km in {i % 5 + 1} hours. What is its speed?")
            for i in range(count)
        )


class ReferenceClient:
    """The reference code's calling pattern: a fresh client per call, one blocking request at a time."""

    def __init__(self, roles: dict[str, RoleConfig]) -> None:
        self.roles = roles
        self.requests = 0

    async def complete(self, role: str, messages: Any, *, priority: float = 0) -> Completion:
        config = self.roles[role]
        client = openai.OpenAI(base_url=config.base_url, api_key="EMPTY", max_retries=0)
        started = time.perf_counter()
        response = client.chat.completions.create(model=config.model, messages=messages, temperature=0)
        client.close()
        self.requests += 1
        key = call_key(config.model, messages, config.params())
        return _completion(key, response.model_dump(), time.perf_counter() - started)


async def baseline(problems: list[ProblemInput], options: GenerateOptions) -> tuple[int, float]:
    client = ReferenceClient({"extract": options.extract, "rewrite": options.rewrite})
    pipeline = Pipeline(client=client, prompts=load_prompts(), options=options)  # type: ignore[arg-type]
    started = time.perf_counter()
    for problem in problems:
        conditions, extraction = await pipeline.extract(problem)
        for k, condition in enumerate(conditions, 1):
            for kind in options.rewrite_types:
                await pipeline.candidate(problem, k, condition, kind, extraction)
    return client.requests, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=500)
    parser.add_argument("--baseline-problems", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()

    server, url = start_server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            engine = get_engine(f"sqlite:///{Path(tmp) / 'bench.sqlite'}")
            add_problems(engine, args.problems)
            role = {"base_url": url, "api_key_env": "BENCH_UNSET_KEY", "timeout": 60.0}
            options = GenerateOptions(
                extract=RoleConfig(model="m-i", **role), rewrite=RoleConfig(model="m-r", **role),
                concurrency=args.concurrency,
            )
            with read_session(engine) as session:
                rows = session.execute(
                    select(Problem.id, Problem.data_source, Problem.position, Problem.question, Problem.ground_truth)
                    .order_by(Problem.id).limit(args.baseline_problems)
                )
                sample = [ProblemInput(**row._asdict()) for row in rows]

            base_requests, base_seconds = asyncio.run(baseline(sample, options))
            base_rate = base_requests / base_seconds

            run = run_generation(engine, options=options)
            assert run.status == "succeeded" and run.failures == 0, run.errors
            if run.retry_reasons:
                print(f"retries in the concurrent run: {run.retry_reasons}")
            sent = run.calls["requests"] - run.calls["retries"]
            assert sent == args.problems * REQUESTS_PER_PROBLEM, run.calls
            rate = sent / run.seconds

            cached = run_generation(engine, options=options)
            assert cached.calls["requests"] == 0 and cached.calls["cache_hits"] == sent
            # Nothing changed, so nothing is written but the run row.
            assert (cached.candidates_written, cached.candidates_unchanged) == (0, run.candidates_written), cached
            with read_session(engine) as session:
                candidates = session.execute(select(func.count()).select_from(Candidate)).scalar_one()
    finally:
        server.terminate()
        server.wait()

    speedup = rate / base_rate
    goal = 0.9 * args.concurrency
    cached_share = cached.seconds / run.seconds
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.system()} {platform.release()}")
    print(f"endpoint latency {args.latency * 1000:.0f} ms/request; {REQUESTS_PER_PROBLEM} requests per problem")
    print(f"baseline (sequential, new client per call): {base_requests} requests in {base_seconds:.2f}s "
          f"= {base_rate:.2f} req/s ({args.baseline_problems} problems)")
    print(f"concurrent (--concurrency {args.concurrency}): {sent} requests in {run.seconds:.2f}s "
          f"= {rate:.1f} req/s ({args.problems} problems, {candidates} candidates written)")
    print(f"speed-up: {speedup:.1f}x (goal >= {goal:.1f}x: {'met' if speedup >= goal else 'NOT met'}); "
          f"{rate / (args.concurrency / args.latency):.0%} of the ideal {args.concurrency / args.latency:.0f} req/s")
    print(f"cached re-run: {cached.seconds:.2f}s = {cached_share:.1%} of the uncached run, "
          f"{cached.candidates_written} candidates written, {cached.candidates_unchanged} unchanged "
          f"(goal < 5%: {'met' if cached_share < 0.05 else 'NOT met'})")


if __name__ == "__main__":
    main()
