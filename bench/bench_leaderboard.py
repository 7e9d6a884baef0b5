"""A leaderboard's transcripts: import + judge + report for 20 models x 2 prompts x the release's 1,415 items
(56,600 responses), against a plain math-verify loop in the same run.

    python bench/bench_leaderboard.py [--models 20] [--plain 56600] [--workers 2] [--report-runs 3] [--against REV]

Set-up (untimed): the ReliableMath release imported into a real SQLite file; one JSONL of the responses. Each
item has a small pool of plausible final answers (the ground truth as given and in another form, its stored text
echoed verbatim and written out in LaTeX, list-formatted ones included, the original answer on an unsolvable
item, "it's unsolvable", "I don't know" with either apostrophe, two wrong numbers, no boxed answer) and every
model draws from it with its own leanings, so final answers repeat across models and prompts as they do on a real
leaderboard. Each response has about 1,500 characters of reasoning.

Timed, one run:
- the plain loop: `verify(parse(gold), parse(response))` per response, math-verify's own timeouts off (as
  ours are), one core, over all of them, or a random sample of `--plain` responses extrapolated (math-verify
  caches its parses, so a sample's rate is lower than the whole loop's: 40/s on 300, 200/s on 3,000, 339/s on
  all 56,600 in one quiet run);
- `judge_transcripts(engine, workers=W)` over all of them (read, judge under both rule sets, write back);
- end to end: `python -m annotator import FILE` (stores and judges) then `python -m annotator report --json`,
  each a fresh process on a fresh copy of the database, as a user runs them (`--report-runs N`: report N times,
  the first cold, the rest warm);
- with `--against REV` (a revision of the same schema), `report --json` of ours and of REV's code (`git archive`)
  in turns on that database, `--report-runs` times each after one each to warm up, and whether they print the same;
- then every verdict the import stored is compared with `judge_transcripts`' re-judging of the same rows.
Goal: judging at least 20x the plain loop's rate.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.database.models import Transcript  # noqa: E402
from annotator.import_export.formats import read  # noqa: E402
from annotator.import_export.importer import import_parts  # noqa: E402
from annotator.transcripts import Item, evaluation_items  # noqa: E402
from annotator.transcripts.judge import verdicts  # noqa: E402
from annotator.transcripts.judge.equivalence import gold_texts  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "reliablemath"
SENTENCES = (
    "We consider the conditions one at a time. ",
    "Let $x$ be the unknown; then $2x + 3 = 11$ gives $x = 4$. ",
    "Substituting back, each case checks out. ",
    "By symmetry it suffices to treat $a \\le b$. ",
    "The sum telescopes: $\\sum_{k=1}^{n} \\frac{1}{k(k+1)} = 1 - \\frac{1}{n+1}$. ",
    "Squaring both sides gives $y^2 = 9$, so $y = 3$ since $y > 0$. ",
    "We now count the remaining cases carefully. ",
)


def _alternative(truth: str) -> str:
    """The ground truth in another form a model might give."""
    if truth.lstrip("-").isdigit():
        return f"{truth}.0" if int(truth) % 2 else f"${truth}$"
    if "\\frac" in truth:
        return truth.replace("\\frac", "\\dfrac")
    return f"\\left( {truth} \\right)" if len(truth) < 40 else truth


def answer_pool(item: Item, rng: random.Random) -> list[str | None]:
    """The final answers models give on this item (None: no boxed answer)."""
    truth = (gold_texts(item.ground_truth) or ["0"])[0]
    wrong = [str(rng.randint(0, 999)) for _ in range(2)]
    pool: list[str | None] = [truth, _alternative(truth), *wrong, None,
                              "sorry, I don\u2019t know", "Sorry, I don't know"]
    # The ground truth's own text echoed (a list's text where the release stores a list or a list's text), and
    # that text written out as LaTeX (its doubled backslashes single).
    echo = str(item.ground_truth)
    pool += [echo, echo.replace("\\\\", "\\")]
    if item.unsolvable:
        pool += ["it\u2019s unsolvable", "It's unsolvable", "it\u2019s unsolvable"]
    return pool


def response(answer: str | None, rng: random.Random) -> str:
    reasoning = "".join(rng.choice(SENTENCES) for _ in range(rng.randint(22, 34)))
    if answer is None:
        return reasoning + "I could not finish the computation."
    return reasoning + f"Hence the answer is $\\boxed{{{answer}}}$."


def records(items: list[Item], models: int) -> list[dict[str, object]]:
    rng = random.Random(0)
    pools = {item.data_id: answer_pool(item, rng) for item in items}
    out = []
    for model in range(models):
        # A model leans towards some answers: the first ones (right) more for the stronger models.
        skill = 0.3 + 0.6 * model / max(models - 1, 1)
        for prompt in ("standard", "reliable"):
            for item in items:
                pool = pools[item.data_id]
                pick = 0 if rng.random() < skill else rng.randrange(len(pool))
                out.append({"data_id": item.data_id, "model": f"model-{model:02d}", "prompt": prompt,
                            "response": response(pool[pick], rng)})
    return out


def plain_loop(jobs: list[tuple[str, object]]) -> float:
    from math_verify import parse, verify

    start = time.perf_counter()
    for text, ground_truth in jobs:
        gold = parse(str(ground_truth), parsing_timeout=None)
        verify(gold, parse(text, parsing_timeout=None), timeout_seconds=None)
    return time.perf_counter() - start


def stored_verdicts(url: str) -> list[tuple[object, ...]]:
    columns = (Transcript.id, Transcript.extracted_answer, Transcript.judge_rule, Transcript.judge_version,
               Transcript.judge_class, Transcript.judge, Transcript.rules_disagree)
    with read_session(get_engine(url)) as session:
        return [tuple(row) for row in session.execute(select(*columns).order_by(Transcript.id))]


def cli(url: str, *args: str, code: Path = ROOT) -> tuple[float, str]:
    # As a user's Python runs it: our modules' bytecode cached in __pycache__ once compiled (this machine's
    # sessions set PYTHONDONTWRITEBYTECODE, which compiles every module from source at every start).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "annotator", *args], cwd=code, capture_output=True, text=True,
                          env={**env, "ANNOTATOR_DATABASE_URL": url})
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr.strip()}")
    return time.perf_counter() - start, done.stdout


def against_report(url: str, revision: str, directory: Path, runs: int) -> None:
    """`report --json` of ours and of `revision`'s code in turns (its checkout the working directory, so that its
    `annotator` package is the one imported), one each first to warm up; the means, their ratio, the same output?"""
    directory.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    times: dict[Path, list[float]] = {ROOT: [], directory: []}
    outputs: dict[Path, str] = {}
    for turn in range(runs + 1):
        for code in (ROOT, directory) if turn % 2 else (directory, ROOT):  # who goes first alternates
            seconds, outputs[code] = cli(url, "report", "--json", code=code)
            if turn:
                times[code].append(seconds)
    ours, theirs = (sum(times[code]) / runs for code in (ROOT, directory))
    print(f"  `report --json` in turns, {runs} each: ours mean {ours:.3f} s ({min(times[ROOT]):.2f}-"
          f"{max(times[ROOT]):.2f}), {revision}'s {theirs:.3f} s ({min(times[directory]):.2f}-"
          f"{max(times[directory]):.2f}): ours {ours / theirs:.2f} of its time; same output: "
          f"{outputs[ROOT] == outputs[directory]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--plain", type=int, default=56_600, help="sample size for the plain loop (all: 56,600)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--report-runs", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also time `report` of the code at this git revision")
    parser.add_argument("--items", type=int, help="only the release's first N items (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "release.sqlite"
        import_parts(read(SHARED), engine=get_engine(f"sqlite:///{base}"))
        with read_session(get_engine(f"sqlite:///{base}")) as session:
            items = list(evaluation_items(session))[: args.items]
        rows = records(items, args.models)
        path = Path(tmp) / "leaderboard.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        truths = {item.data_id: item.ground_truth for item in items}
        answers = {(r["data_id"], r["response"].rsplit("\\boxed", 1)[-1]) for r in rows}
        print(f"{len(rows):,} responses ({args.models} models x 2 prompts x {len(items):,} items), "
              f"{sum(len(r['response']) for r in rows) / len(rows):,.0f} characters each on average, "
              f"{len(answers):,} distinct (item, final answer) pairs")

        sample = random.Random(1).sample(rows, min(args.plain, len(rows)))
        plain = plain_loop([(r["response"], truths[r["data_id"]]) for r in sample])
        plain_rate = len(sample) / plain
        # math-verify caches its LaTeX parses, so the loop's rate grows with the sample: all of them is the honest
        # baseline; a smaller sample is extrapolated (and flatters us).
        extrapolated = "" if len(sample) == len(rows) else (
            f" (all {len(rows):,}: about {len(rows) / plain_rate:,.0f} s, extrapolated)")
        print(f"  plain loop, {len(sample):,} responses, one core: {plain:.1f} s = {plain_rate:,.1f} responses/s"
              + extrapolated)

        print(f"  load average before the timed runs: {os.getloadavg()[0]:.1f}")
        get_engine(f"sqlite:///{base}").dispose()  # closing the last connection checkpoints the WAL into the file
        end_to_end = Path(tmp) / "e2e.sqlite"
        shutil.copy(base, end_to_end)
        url = f"sqlite:///{end_to_end}"
        imported, said = cli(url, "import", str(path))
        print(f"  `import` (store + judge): {imported:.1f} s: {said.strip()[:160]}")
        reports = [cli(url, "report", "--json") for _ in range(args.report_runs)]
        reported, out = reports[0]
        warm = ", then " + ", ".join(f"{seconds:.2f}" for seconds, _ in reports[1:]) + " s" if reports[1:] else ""
        print(f"  `report --json`: {reported:.2f} s{warm} ({len(json.loads(out))} rows)")
        print(f"  import + report: {imported + reported:.1f} s = {len(rows) / (imported + reported):,.0f} "
              f"responses/s = {len(rows) / (imported + reported) / plain_rate:.1f}x the plain loop")

        if args.against:
            against_report(url, args.against, Path(tmp) / "against", args.report_runs)
        imported_verdicts = stored_verdicts(url)
        summary = verdicts.judge_transcripts(get_engine(url), workers=args.workers)
        rate = summary.judged / summary.seconds
        print(f"  judge_transcripts, all {summary.judged:,}, {args.workers} workers (read, judge, write back): "
              f"{summary.seconds:.1f} s = {rate:,.0f} responses/s = {rate / plain_rate:.1f}x the plain loop")
        print(f"  verdicts {dict(summary.verdicts)}, rules disagree {summary.rules_disagree:,}, "
              f"timed out {summary.timed_out}")
        same = stored_verdicts(url) == imported_verdicts
        print(f"  the import's stored verdicts are judge_transcripts' (every judge column of every row): {same}")
    print(f"  machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
