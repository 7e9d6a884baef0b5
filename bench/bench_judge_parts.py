"""An LLM judge job split into parts that several workers take, against the same job in one piece, on PostgreSQL.

    python bench/bench_judge_parts.py [--transcripts 2000] [--latency 0.05] [--concurrency 4] [--parts 4] [--workers 2]
        [--server postgresql+psycopg://...]

Set-up (untimed): a throwaway PostgreSQL server (fsync off), or `--server`, with three databases (dropped after)
holding the same N transcripts; the scripted OpenAI-compatible judge (`tests/support/openai_server.py`) answering
each request after `--latency` seconds, as a model server would.

Timed (wall time, each from the command's start, process start-up included):
- `judge --rule llm` in one piece, one process;
- `judge --rule llm --parts P`, the parts one after another in one process (what the parts cost: the roll-up);
- `judge --rule llm --parts P --queue`, then W `worker` processes until the job has ended.
Every database ends with the same verdicts (checked).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.database.models import Judgement, Run  # noqa: E402
from tests.support.llm_judge import SPECS, add_judged_transcripts, scripted_judge  # noqa: E402
from tests.support.openai_server import OpenAIServer  # noqa: E402
from tests.support.postgres import create_database, drop_database, postgres_server  # noqa: E402


def _command(url: str, server: OpenAIServer, concurrency: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "annotator", "judge", "--rule", "llm", "--model", "judge-m", "--base-url",
            server.url, "--api-key-env", "UNSET_BENCH_KEY", "--concurrency", str(concurrency), "--no-progress", *extra]


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "ANNOTATOR_DATABASE_URL": url}


def _verdicts(url: str) -> dict[int, str]:
    with read_session(get_engine(url)) as session:
        return dict(session.execute(select(Judgement.transcript_id, Judgement.verdict)).all())


def _in_one_process(url: str, server: OpenAIServer, concurrency: int, *extra: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(_command(url, server, concurrency, *extra), env=_env(url), cwd=ROOT, capture_output=True,
                          text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    return seconds


def _with_workers(
    url: str, server: OpenAIServer, concurrency: int, parts: int, workers: int
) -> tuple[float, list[str]]:
    started = time.perf_counter()
    queued = subprocess.run(_command(url, server, concurrency, "--parts", str(parts), "--queue"), env=_env(url),
                            cwd=ROOT, capture_output=True, text=True, check=True)
    job_id = int(queued.stdout.strip())
    processes = [subprocess.Popen([sys.executable, "-m", "annotator", "worker", "--kinds", "judge", "--poll", "0.1"],
                                  env=_env(url), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(workers)]
    engine = get_engine(url)
    try:
        while True:
            with read_session(engine) as session:
                job = session.get(Run, job_id)
                if job is not None and job.status not in ("queued", "running"):
                    break
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        with read_session(engine) as session:
            # Where the time went: each part's worker and its claim and end, in seconds after the job was queued.
            names: dict[str, str] = {}
            held = []
            for part in session.scalars(select(Run).where(Run.parent_id == job_id).order_by(Run.id)):
                name = names.setdefault(part.worker or "", f"worker {len(names) + 1}")
                start, end = ((moment - job.created_at).total_seconds() for moment in (part.started_at,
                                                                                       part.finished_at))
                held.append(f"{name} {start:.1f}-{end:.1f} s")
    finally:
        for process in processes:
            process.terminate()
            process.wait()
    if job.status != "succeeded":
        raise SystemExit(f"job {job_id} ended {job.status}: {job.message}")
    return seconds, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--server", help="a running PostgreSQL server (postgresql+psycopg://...) to make the three "
                        "databases on, instead of a throwaway one")
    args = parser.parse_args()
    specs = (SPECS * (args.transcripts // len(SPECS) + 1))[: args.transcripts]
    with nullcontext(args.server) if args.server else postgres_server() as server_url:
        urls = [create_database(server_url, f"b_{uuid.uuid4().hex[:10]}") for _ in range(3)]
        for url in urls:
            add_judged_transcripts(get_engine(url), specs)
        with OpenAIServer(answer=scripted_judge, latency=args.latency) as server:
            whole = _in_one_process(urls[0], server, args.concurrency)
            parts_here = _in_one_process(urls[1], server, args.concurrency, "--parts", str(args.parts))
            shared, held = _with_workers(urls[2], server, args.concurrency, args.parts, args.workers)
        reference = _verdicts(urls[0])
        assert len(reference) == args.transcripts and all(_verdicts(url) == reference for url in urls[1:])
        for url in urls:
            drop_database(server_url, url.rsplit("/", 1)[-1])
    n = args.transcripts
    print(f"{n} transcripts, latency {args.latency} s, concurrency {args.concurrency}:")
    print(f"  in one piece, one process:           {whole:6.2f} s  {n / whole:7.1f}/s")
    print(f"  {args.parts} parts, one process:              {parts_here:6.2f} s  {n / parts_here:7.1f}/s")
    print(f"  {args.parts} parts, {args.workers} workers:                {shared:6.2f} s  {n / shared:7.1f}/s  "
          f"(x{whole / shared:.2f} the one piece)")
    print(f"  the parts: {'; '.join(held)}")


if __name__ == "__main__":
    main()
