"""Every script in bench/ runs at a tiny size: it starts, seeds its database and prints its figures, so a change
that breaks a benchmark fails here. The figures' values are not checked (speed is for the benchmarks themselves),
only that each script's rows appear with a number.

A new script in bench/ needs an entry in `SMOKE` (or, when it is not run by itself, in `NOT_SCRIPTS`):
`test_every_bench_script_has_a_smoke_entry` fails until it has one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, missing
from tests.support.postgres import drop_database

BENCH = PROJECT_ROOT / "bench"
TIMEOUT_SECONDS = 300  # a loaded machine: far above any script's tiny run
# Where the bench scripts read the ReliableMath release from (they take no data path).
RELEASE = PROJECT_ROOT.parent / "shared" / "data" / "reliablemath"


@dataclass(frozen=True)
class Smoke:
    """A script's tiny run.

    Attributes:
        args: its arguments; `{root}` is this checkout, `{postgres}` a PostgreSQL server's SQLAlchemy URL (its
            `postgres` database), `{server}` the same server as `postgresql://host:port`, `{scale}` a copy of the
            tiny scale data set `bench/scale_data.py` builds.
        figures: lines it prints, as text with `#` for a number and `…` for any text (each found anywhere).
        needs: what it runs on besides SQLite files: "postgres", "scale" (implies postgres), "chromium",
            "release" (the shared ReliableMath release).
    """

    args: tuple[str, ...]
    figures: tuple[str, ...]
    needs: frozenset[str] = frozenset()


def smoke(*args: str, figures: tuple[str, ...], needs: str = "") -> Smoke:
    return Smoke(args, figures, frozenset(needs.split()))


# script -> its tiny run. Sizes are the smallest that still walk every step the script times.
SMOKE: dict[str, Smoke] = {
    "ab_checkouts.py": smoke(
        "--before", "{root}", "--after", "{root}", "--rounds", "1", "--warmup", "0",
        "--figure", "options=(\\d+) options?", "--", "-c", "print('2 options')",
        figures=("wall s # # #", "options # # #"),
    ),
    "ab_exports.py": smoke(
        "--base", "{root}", "--candidates", "20", "--repeat", "1", "--cases", "jsonl", "labels parquet",
        figures=("jsonl A median # s min # s | B median # s", "labels parquet A median # s", "files that differ: "),
    ),
    "ab_treecut_versions.py": smoke(
        "--old", "{root}", "--rounds", "1", figures=("round 1: old # pairs/s, new # pairs/s, new/old #",),
    ),
    "bench_adjudicate.py": smoke(
        "--candidates", "30", "--keys", "2",
        figures=("one aggregate over every label (median of 5) # ms",
                 "DisputeQueue: one key, adjudicate + next (median of 2) # ms"),
    ),
    "bench_adaptive_overlap.py": smoke(
        "--candidates", "60", "--teams", "mixed", "--thresholds", "0.99",
        figures=("| fixed k = 2 | # | # | +0% | # | #% | # |",
                 "| adaptive, 0.95, at most 3 | # | # | …% | # | …% | # |"),
    ),
    "bench_agreement.py": smoke(
        "--candidates", "30", "--annotators", "4", "--repeat", "1",
        figures=("read labels # s, compute # s, total # s", "human_check alpha #"),
    ),
    "bench_batches.py": smoke(
        "--candidates", "10", "--annotators", "2", "--overlap", "2",
        figures=("batches (claims + 2 sheets): # s", "import of the filled sheets: # s (# labels/s)",
                 "export --format labels --with-history: # s", "import / floor = #"),
    ),
    "bench_edge_answers.py": smoke(
        "--items", "3",
        figures=("36 responses (12 edge answers x 3 items)", "`import`: exit 0 in # s", "stored verdicts: "),
        needs="release",
    ),
    "bench_evaluate.py": smoke(
        "--items", "8", "--concurrency", "4", "--latency", "0.001", "--rounds", "1",
        figures=("round 1: bare AsyncOpenAI #s = # req/s; evaluate #s = # req/s", "evaluate / bare: median #x"),
    ),
    "bench_figures_keypress.py": smoke(
        "--url", "{scale}", "--presses", "2", "--rounds", "1", "--warmup", "0", "--pause-ms", "0",
        figures=("alone: p50 # ms, p95 # ms", "viewer: p50 # ms, p95 # ms", "p95 with the viewer / alone: #"),
        needs="scale chromium",
    ),
    "bench_freshness.py": smoke(
        "--candidates", "30", "--transcripts", "30", "--repeat", "1",
        figures=("labels_version # ms", "transcripts_version # ms", "Team figures # s", "Report counts # s"),
    ),
    "bench_generate.py": smoke(
        "--problems", "2", "--baseline-problems", "1", "--concurrency", "4", "--latency", "0.001",
        figures=("baseline (sequential, new client per call): # requests in #s", "speed-up: #x",
                 "cached re-run: #s = #% of the uncached run"),
    ),
    "bench_import_export.py": smoke(
        "--candidates", "20", "--repeat", "1",
        figures=("our_import # s peak RSS # MB", "import ratio #x", "peak RSS of our import at 20 vs 10: #x"),
    ),
    "bench_import_lock.py": smoke(
        "--labels", "20", "--repeat", "1",
        figures=("lock_seconds # #", "longest_wait # #", "presses during the imports: #, saved #"),
    ),
    "bench_inspect_export.py": smoke(
        "--models", "1", "--items", "10",
        figures=("inspect 10 transcripts # s", "transcripts 10 transcripts # s"), needs="release",
    ),
    "bench_judge.py": smoke(
        "--responses", "20", "--plain", "5", "--workers", "1",
        figures=("plain loop verify(parse(gold), parse(response)), 5 sampled: # s",
                 "judge_transcripts, all 20 (read, judge, write back): # s = # responses/s = #x the plain loop"),
        needs="release",
    ),
    "bench_judge_parts.py": smoke(
        "--transcripts", "4", "--latency", "0.001", "--concurrency", "2", "--parts", "2", "--workers", "1",
        "--server", "{postgres}",
        figures=("in one piece, one process: # s", "2 parts, one process: # s", "2 parts, 1 workers: # s"),
        needs="postgres",
    ),
    "bench_judges.py": smoke(
        "--url", "{scale}", figures=("judge_agreement, median of 5 after # ms", "reliablemath: reviewed #"),
        needs="scale",
    ),
    "bench_queue_keys.py": smoke(
        "--candidates", "40", "--presses", "2", "--warmup", "0", "--pause-ms", "0", "--burst", "3",
        figures=("near 2 # # # # #", "far 2 # # # # #", "burst near: 3 keys 20 ms apart: 3 labels on 3 candidates"),
        needs="chromium",
    ),
    "bench_label_import.py": smoke(
        "--labels", "20", "--repeat", "1",
        figures=("baseline (json.load + executemany) # s", "our import # s # labels/s", "ratio #x"),
    ),
    "bench_label_pages.py": smoke(
        "--url", "{scale}", "--repeat", "1", "--only", "adjudicate,team,overview,browse,pages",
        figures=("Adjudicate: DisputeQueue().next (open) # ms", "Team: figures (first open / recompute) # ms",
                 "Overview: stats.compute + stats.progress # ms", "Browse: first page # ms", "page Browse # ms"),
        needs="scale",
    ),
    "bench_leaderboard.py": smoke(
        "--models", "1", "--items", "5", "--plain", "2", "--workers", "1", "--report-runs", "1",
        figures=("plain loop, 2 responses, one core: # s", "`report --json`: # s", "import + report: # s",
                 "judge_transcripts, all 10, 1 workers …: # s",
                 "the import's stored verdicts are judge_transcripts' (every judge column of every row): True"),
        needs="release",
    ),
    "bench_overview_snapshot.py": smoke(
        "--url", "{scale}", "--repeat", "1",
        figures=("computation (background), median # ms", "look right after a label, median # ms"),
        needs="scale",
    ),
    "bench_report_intervals.py": smoke(
        "--models", "1", "--repeat", "1", "--bootstrap", "10",
        figures=(
            "report(), --bootstrap 10 (one sample per item: MOVER again): # s",
            "python -m annotator report --json (fresh interpreter): # s",
        ),
        needs="release",
    ),
    "bench_report_page.py": smoke(
        "--transcripts", "20", "--repeat", "1",
        figures=("AppTest floor (a title only): # s", "cold (first open after the server starts): # s; warm: # s"),
        needs="release",
    ),
    "bench_review.py": smoke(
        "--transcripts", "20", "--repeat", "1", "--presses", "2",
        figures=("queue: # ms; floor", "review keypress (record + load the next), median of 2: # ms"),
    ),
    "bench_scale.py": smoke(
        "--url", "{scale}", "--repeat", "1", "--warmup", "0",
        figures=("| Annotate, first load | # | # |", "| Browse, a search (r4321x) | # |", "| Report, later | # |"),
        needs="scale",
    ),
    "bench_scale_import.py": smoke(
        "--server", "{server}", "--database", "smoke_scale_import", "--candidates", "10",
        figures=("import --annotator a3: # s", "rows: problem #, candidate 10, annotation 30"),
        needs="postgres",
    ),
    "bench_shared_figures.py": smoke(
        "--url", "{scale}", "--figures", "team,overview,report,report_judges",
        figures=("team: server A's first open (computes and stores) # s; server B's first open",
                 "report_judges: server A's first open (computes and stores) # s"),
        needs="scale",
    ),
    "bench_team_figures.py": smoke(
        "--url", "{scale}", "--against", "HEAD", "--rounds", "1",
        figures=("Team's counts computed: median # s", "Team's first open, nothing stored: # s",
                 "20 labels saved one by one: in Team's stored counts # s", "a look at stale coefficients: # s",
                 "peak memory: this process (the app server's part) # MB",
                 "this checkout's child, median of 1: # s, CPU # s, peak # MB", "HEAD's child, median of 1: # s"),
        needs="scale",
    ),
    "bench_team_page.py": smoke(
        "--candidates", "20", "--repeat", "1",
        figures=("first render after the server starts (computes the snapshot): # s",
                 "the page's own time (later render minus floor): # s"),
    ),
    "bench_text_elements.py": smoke(
        "--presses", "1", "--warmup", "0",
        figures=("none p50 # ms", "markdown p50 # ms", "escaped p50 # ms", "text p50 # ms", "code p50 # ms"),
        needs="chromium",
    ),
    "bench_transcript_pages.py": smoke(
        "--url", "{scale}", "--repeat", "1",
        figures=("Report: counting.read # s", "Report page, cold (first open after start) # s",
                 "Review page, opened # s"),
        needs="scale",
    ),
    "bench_transfer.py": smoke(
        "--umwp", "10", "--repeat", "1",
        figures=("import release (# records): page # s, CLI path # s", "export reliablemath: zip # s, CLI path # s"),
        needs="release",
    ),
    "bench_treecut.py": smoke("--count", "2", "--repeat", "1", figures=("10 8 checked # # #",)),
    # Builds the tiny scale data set the `scale` entries run on (the `scale_data` fixture runs it).
    "scale_data.py": smoke(
        "--server", "{server}", "--database", "smoke_scale", "--candidates", "50",
        figures=("built smoke_scale in # s: problem #, candidate 50",), needs="postgres",
    ),
}
# Files in bench/ that are not run by themselves -> what runs them.
NOT_SCRIPTS: dict[str, str] = {"keys_data.py": "the data set bench_queue_keys.py seeds (a module, not a script)"}
SCALE_BUILDER = "scale_data.py"


def bench_files() -> list[str]:
    return sorted(path.name for path in BENCH.glob("*.py"))


def test_every_bench_script_has_a_smoke_entry() -> None:
    without = [name for name in bench_files() if name not in SMOKE and name not in NOT_SCRIPTS]
    assert not without, f"add each to SMOKE in {Path(__file__).relative_to(PROJECT_ROOT)}: {without}"
    assert sorted(set(SMOKE) | set(NOT_SCRIPTS)) == bench_files(), "an entry names no file in bench/"


NUMBER = r"-?(?:\d[\d,]*)?\.?\d+"


def figure_pattern(text: str) -> re.Pattern[str]:
    """`text` as a regular expression: `#` a number, `…` any text, a run of spaces one or more spaces."""
    pattern = re.escape(text).replace("\\#", NUMBER).replace("#", NUMBER).replace("…", ".*?")
    return re.compile(re.sub(r"(?:\\ )+", " +", pattern))


def test_figure_patterns_read_numbers_and_rows() -> None:
    pattern = figure_pattern("annotate 1 # #")
    assert pattern.search("       annotate    1    151.1  1,181")
    assert pattern.search("   annotate 1 -0.5 .3")
    assert not pattern.search("annotate 1 n/a 3")
    assert not pattern.search("annotate 2 1 3")
    assert figure_pattern("a (b) … True").search("a (b) any words: True")


def run_script(script: str, values: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python bench/SCRIPT` with its tiny arguments, in its own process group (killed whole on a timeout: the
    browser benchmarks start a server and Chromium); temporary files in a short-named folder (Chromium's socket path
    there must fit a Unix socket's 107 bytes, which pytest's own folders can pass), removed after."""
    command = [sys.executable, str(BENCH / script), *(arg.format(**values) for arg in SMOKE[script].args)]
    with tempfile.TemporaryDirectory(prefix="bench-", ignore_cleanup_errors=True) as short:
        return _run(script, command, {**os.environ, "TMPDIR": short})


def _run(script: str, command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{script} did not end in {TIMEOUT_SECONDS} s:\n{stdout[-2000:]}\n{stderr[-3000:]}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def assert_figures(script: str, result: subprocess.CompletedProcess[str]) -> None:
    shown = (f"{script} exited {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n"
             f"--- stderr\n{result.stderr[-3000:]}")
    assert result.returncode == 0, shown
    absent = [text for text in SMOKE[script].figures if not figure_pattern(text).search(result.stdout)]
    assert not absent, f"figures not printed: {absent}\n{shown}"


@dataclass
class ScaleData:
    server: str  # postgresql://host:port
    database: str
    result: subprocess.CompletedProcess[str]


def _servers(postgres_url: str) -> dict[str, str]:
    return {"postgres": postgres_url, "server": postgres_url.rsplit("/", 1)[0].replace("+psycopg", "")}


@pytest.fixture(scope="module")
def scale_data(postgres_url: str) -> ScaleData:
    """`bench/scale_data.py`'s tiny run, once: the database the `scale` entries each get a copy of."""
    values = {"root": str(PROJECT_ROOT), **_servers(postgres_url)}
    result = run_script(SCALE_BUILDER, values)
    return ScaleData(values["server"], "smoke_scale", result)


@pytest.fixture
def scale_copy(scale_data: ScaleData, postgres_url: str) -> Iterator[str]:
    assert scale_data.result.returncode == 0, f"{SCALE_BUILDER} failed (its own test shows why)"
    name = f"scale_{uuid.uuid4().hex[:10]}"
    import psycopg

    with psycopg.connect(f"{scale_data.server}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{scale_data.database}"')
    yield f"{scale_data.server.replace('postgresql://', 'postgresql+psycopg://')}/{name}"
    drop_database(postgres_url, name)


def _marks(script: str) -> list[pytest.MarkDecorator]:
    needs = SMOKE[script].needs if script in SMOKE else frozenset()
    marks = [pytest.mark.e2e] if "chromium" in needs else []
    return marks + ([pytest.mark.postgres] if needs & {"postgres", "scale"} else [])


@pytest.mark.parametrize(
    "script", [pytest.param(name, marks=_marks(name)) for name in bench_files() if name not in NOT_SCRIPTS]
)
def test_bench_script_runs_tiny(script: str, request: pytest.FixtureRequest) -> None:
    if script not in SMOKE:
        pytest.fail(f"bench/{script} has no entry in SMOKE ({Path(__file__).relative_to(PROJECT_ROOT)})")
    needs = SMOKE[script].needs
    values = {"root": str(PROJECT_ROOT)}
    if "release" in needs and not (RELEASE / "unsol.json").exists():
        missing(f"the bench scripts read the shared ReliableMath release at {RELEASE}; it is not there")
    if "chromium" in needs:
        from tests.e2e.conftest import CHROMIUM

        if not Path(CHROMIUM).exists():
            missing(f"Chromium is not at {CHROMIUM}")
        if importlib.util.find_spec("playwright") is None:
            missing("playwright is not installed")
    if needs & {"postgres", "scale"}:
        values |= _servers(request.getfixturevalue("postgres_url"))
    if script == SCALE_BUILDER:
        assert_figures(script, request.getfixturevalue("scale_data").result)
        return
    if "scale" in needs:
        values["scale"] = request.getfixturevalue("scale_copy")
    assert_figures(script, run_script(script, values))
