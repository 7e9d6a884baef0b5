"""The allowed range of every number a person or a file can give us, in one place: the project settings, the
command-line options (`annotator.cli._app.bounded`) and the integers readers accept.

Imports nothing of ours. A value outside its range is refused before anything is stored, with a one-line
message naming the value and the range (`RangeError`). Integers that reach an INTEGER column stay within
32 bits: SQLite would store more, PostgreSQL would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

INT32_MAX = 2**31 - 1


class RangeError(ValueError):
    """A number outside its allowed range (or not a number at all)."""


@dataclass(frozen=True)
class Range:
    """The closed range [low, high] of the value called `name`; `whole` if it must be an integer; `unit` what
    it counts ("seconds": "a number of seconds from ...")."""

    name: str
    low: float
    high: float
    whole: bool = True
    unit: str = ""

    def describe(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        of = f" of {self.unit}" if self.unit else ""
        return f"{kind}{of} from {_number(self.low)} to {_number(self.high)}"

    def span(self) -> str:
        """`LOW..HIGH`, as `--help` shows it."""
        return f"{_number(self.low)}..{_number(self.high)}"

    def contains(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.whole and not isinstance(value, int):
            return False
        return not (isinstance(value, float) and math.isnan(value)) and self.low <= value <= self.high

    def check(self, value: Any, *, name: str | None = None) -> Any:
        """`value` if it is in range; else RangeError('NAME must be ... from LOW to HIGH, got VALUE')."""
        if not self.contains(value):
            raise RangeError(f"{name or self.name} must be {self.describe()}, got {_shown(value)}")
        return value


def check_each(checks: dict[str, tuple[Any, Range]], *, error: type[Exception] = RangeError) -> None:
    """Check named values ({name: (value, range)}; None is "not given" and passes); the first one out of its
    range raises `error` with the one-line message."""
    for name, (value, allowed) in checks.items():
        if value is not None and not allowed.contains(value):
            raise error(f"{name} must be {allowed.describe()}, got {_shown(value)}")


def _number(value: float) -> str:
    return f"{value:,}" if float(value).is_integer() else f"{value:g}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# Project settings.
LABELS_PER_CANDIDATE = Range("labels_per_candidate", 1, 20)
# Adaptive overlap (`labelling.adaptive`): the posterior that settles a candidate, and the most labels one gets.
ADAPTIVE_THRESHOLD = Range("adaptive_threshold", 0.5, 0.9999, whole=False)
ADAPTIVE_MAX_LABELS = Range("adaptive_max_labels", 1, 20)
# Bootstrap resamples behind each annotator's accuracy interval (`labelling.accuracy`).
ACCURACY_RESAMPLES = Range("resamples", 0, 10_000)
GOLD_EVERY = Range("gold_every", 0, 1000)  # 0: no gold items; 1 is refused apart (every item gold)
REVIEW_TAGS = Range("the tag list", 1, 9)  # the number keys 1..9 toggle them
TAG_LENGTH = Range("a tag", 1, 100)

# Command-line options (and the stored options of runs the app creates).
SAMPLES = Range("--samples", 1, 100)
CONCURRENCY = Range("--concurrency", 1, 256)
LIMIT = Range("--limit", 0, INT32_MAX)
DAYS = Range("--days", 0.01, 365, whole=False)
TIMEOUT = Range("--timeout", 1, 86_400, whole=False)  # seconds per request
MAX_RETRIES = Range("--max-retries", 0, 100)
BACKOFF = Range("--backoff", 0, 3600, whole=False)
MAX_TOKENS = Range("--max-tokens", 1, 10_000_000)
TEMPERATURE = Range("--temperature", 0, 2, whole=False)
WORKERS = Range("--workers", 1, 64)
SEED = Range("--seed", 0, 2**32 - 1)
BOOTSTRAP = Range("--bootstrap", 0, 100_000)  # resamples for the report's intervals; 0: none
DISAGREED = Range("N", 1, 10_000)  # items the models disagree on most, in `report disagreed N`
RUN_ID = Range("--run-id", 1, INT32_MAX)
MAX_CONDITIONS = Range("--max-conditions", 1, 20)
POLL = Range("--poll", 0.05, 3600, whole=False)  # seconds an idle worker waits before it looks for work again
RUNS_SHOWN = Range("--limit", 1, 100_000)
# A judge run over many transcripts is a job of parts that several workers take (`runs.parts`): `--parts`, else one
# part per JUDGE_PART_TRANSCRIPTS transcripts in its scope (at most PARTS.high).
PARTS = Range("--parts", 1, 200)
JUDGE_PART_TRANSCRIPTS = 5_000
PER_PROBLEM = Range("--per-problem", 1, 100)
PER_ANNOTATOR = Range("--per-annotator", 1, 1_000_000)
OVERLAP = Range("--overlap", 1, 20)
AUDIT_SIZE = Range("--size", 1, 100_000)  # candidates in an audit sample
AUDIT_SEED = Range("--seed", 0, INT32_MAX)  # stored in an INTEGER column
TREECUT_COUNT = Range("--count", 1, 100_000)
TREECUT_VARS = Range("--num-vars", 2, 100)
TREECUT_DEPTH = Range("--ans-depth", 2, 100)
TREECUT_CUT_DEPTH = Range("--cut-depth", 1, 99)

# The environment's numbers (`annotator.settings.environment`).
# How long a sign-in lasts.
SESSION_HOURS = Range("ANNOTATOR_SESSION_HOURS", 0.1, 8760, whole=False, unit="hours")
# How often an open page re-checks its sign-in (0: on every rerun).
SESSION_RECHECK_SECONDS = Range("ANNOTATOR_SESSION_RECHECK_SECONDS", 0, 3600, whole=False, unit="seconds")
# How long a page's write waits for a lock before the page says the database is busy.
PAGE_BUSY_SECONDS = Range("ANNOTATOR_PAGE_BUSY_SECONDS", 0.05, 60, whole=False, unit="seconds")
# Seconds without a heartbeat after which a running run's worker counts as dead.
HEARTBEAT_TIMEOUT = Range("ANNOTATOR_HEARTBEAT_TIMEOUT", 0.5, 86_400, whole=False, unit="seconds")

# Integers in imported files.
POSITION = Range("position", 0, INT32_MAX)  # a problem's index in its source (also inside data_ids)
CONDITION_INDEX = Range("k", 1, 10_000)  # the condition number inside a data_id
SAMPLE = Range("sample", 0, 100_000)
TOKENS = Range("tokens", 0, INT32_MAX)

# Reading files.
JSON_DEPTH = 64  # arrays and objects nested deeper than this are refused
MAX_JSON_BYTES = 256_000_000  # a .json file is parsed whole (memory: a few times its size); JSONL is streamed
MAX_LINE_BYTES = 64_000_000  # one JSONL line (a record's text fields are at most 1M characters each)

# Uploads (the Import and export page), per upload across all its files and archives.
UPLOAD_BYTES = 2_000_000_000  # uncompressed
UPLOAD_ENTRIES = 10_000
UPLOAD_DEPTH = 16  # folders inside an archive
UPLOAD_NAME_CHARS = 400  # a member's path
UPLOAD_RATIO = 200  # uncompressed : compressed, for a member over UPLOAD_RATIO_FROM bytes
UPLOAD_RATIO_FROM = 10_000_000
