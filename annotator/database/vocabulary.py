"""The users' words as types: roles, candidate and run statuses, rewrite types, a label, a `data_id`.

One place for each word, so that pages, the command line, statistics, the database and exports say the
same thing. The database keeps these as plain strings and integers (a rewrite type is open to values
this module does not list, e.g. from a flat table); these types are what the code compares against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple


class Role(StrEnum):
    annotator = "annotator"
    reviewer = "reviewer"
    admin = "admin"


class CandidateStatus(StrEnum):
    """Where a candidate stands in the workflow.

    `pending` candidates are in the queue; `filtered` ones failed an automatic step
    (e.g. LLM verification) and are hidden from the queue by default but kept; `unverified` ones were
    written by ReliableMath Step 1 alone (`generate --steps 1`) and wait for Step 2 (`--steps 2`) outside the
    queue (Browse still opens them).
    """

    pending = "pending"
    filtered = "filtered"
    unverified = "unverified"


class RewriteType(StrEnum):
    """How a candidate was made from its problem.

    ReliableMath removes or contradicts one necessary condition; GSM-IC adds an irrelevant sentence
    (`distractor`: solvable by design); UMWP's categories 2-5 have their own names.
    """

    remove = "remove"
    contradict = "contradict"
    distractor = "distractor"
    ambiguous = "ambiguous"
    unrealistic = "unrealistic"
    unrelated = "unrelated"
    noquestion = "noquestion"


# The release's order of rewrite types within a problem; others sort after these, by name.
RELEASE_REWRITE_ORDER = (RewriteType.remove, RewriteType.contradict)


class RunStatus(StrEnum):
    """The life of a background LLM run (see `annotator.runs`)."""

    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    partial = "partial"  # finished, but some items failed after all their retries
    cancelled = "cancelled"
    failed = "failed"

    @property
    def active(self) -> bool:
        return self in (RunStatus.queued, RunStatus.running)


ACTIVE_RUN_STATUSES = (RunStatus.queued, RunStatus.running)


class RunKind(StrEnum):
    """What a background LLM run does; each kind is also the command that executes it
    (`python -m annotator <kind> --run-id N`)."""

    generate = "generate"  # candidate construction, ReliableMath Steps 1-2
    evaluate = "evaluate"  # model answers on the vetted set (transcripts)
    judge = "judge"  # an LLM judges transcripts (verdicts with a reason)


class LabelSource(StrEnum):
    """Where a candidate's resolved label comes from (its provenance in exports and the manifest)."""

    single = "single"  # one label
    unanimous = "unanimous"  # several labels, all the same
    majority = "majority"  # several labels, a strict majority on human_check
    adjudicated = "adjudicated"  # a reviewer decided (see `Adjudication`)


class LabelState(StrEnum):
    """Where a candidate stands: each candidate is in exactly one state (`queries.label_state`), the words Browse,
    the Overview, `stats` and the queue use.

    With no label yet a candidate is `unlabelled` (in the queue), `filtered` (it failed an automatic check, e.g.
    the LLM verification: out of the queue unless asked for) or `unverified` (written by ReliableMath Step 1
    alone, waiting for Step 2). Once labelled, a reviewer's decision makes it `adjudicated`; labels that tie on
    human_check (no resolved label) make it `disputed`; `labels_per_candidate` labels make it `complete`;
    fewer leave it `in progress`. In this order on the Overview's chart.
    """

    unlabelled = "unlabelled"
    in_progress = "in progress"
    complete = "complete"
    disputed = "disputed"
    adjudicated = "adjudicated"
    filtered = "filtered"
    unverified = "unverified"


class Resolution(StrEnum):
    """What a labelled candidate's labels come to, as `stats` counts them and Browse filters on them.

    `vetted` is the one word for a candidate that passed the human check (ReliableMath Step 3: its resolved
    human_check is 1 over `labels_per_candidate` labels, or a reviewer decided so; `queue.vetted`): what the
    release's `unsol` files hold. The others are not (yet) vetted.
    """

    vetted = "vetted"
    incomplete = "incomplete"  # resolves to human_check = 1 over fewer labels, not adjudicated: not vetted yet
    rejected = "rejected"  # resolves to human_check = 0


class MyLabels(StrEnum):
    """Browse's filters on the viewer's own labels, which everyone may use."""

    any = "any"
    labelled = "labelled by me"
    not_labelled = "not labelled by me"


class VettedRule(StrEnum):
    """Which candidates a release counts as vetted (`queue.vetted`); its manifest names the rule it used."""

    # Resolved to human_check = 1 over `labels_per_candidate` labels (complete), or by a reviewer.
    complete_or_adjudicated = "complete-or-adjudicated"
    # Also those whose labels so far resolve to human_check = 1 but are fewer than `labels_per_candidate`.
    include_incomplete = "include-incomplete"


class JudgeClass(StrEnum):
    """What the automatic judge makes of a model's response (ReliableMath Section 4)."""

    correct = "correct"  # the boxed answer equals the ground truth
    unsolvable = "unsolvable"  # says the problem is unsolvable
    unknown = "unknown"  # says it does not know
    incorrect = "incorrect"  # another answer
    unmatched = "unmatched"  # no final answer found


class Verdict(StrEnum):
    """A response's outcome (ReliableMath Eq. 1-2): success, refusal or failure."""

    S = "S"
    R = "R"
    F = "F"


class LabelError(ValueError):
    """A label that breaks the rules (e.g. difficulty_eval missing when human_check is 1)."""


@dataclass(frozen=True)
class Label:
    """One decision on a candidate: `human_check` (1 acceptable / 0 not) and, only when acceptable,
    `difficulty_eval` (0 simple / 1 hard). Constructing one checks the rules."""

    human_check: int
    difficulty_eval: int | None = None

    def __post_init__(self) -> None:
        if self.human_check not in (0, 1) or isinstance(self.human_check, bool):
            raise LabelError(f"human_check must be 0 or 1, got {self.human_check!r}")
        if self.human_check == 1 and (self.difficulty_eval not in (0, 1) or isinstance(self.difficulty_eval, bool)):
            raise LabelError(f"difficulty_eval must be 0 or 1 when human_check is 1, got {self.difficulty_eval!r}")
        if self.human_check == 0 and self.difficulty_eval is not None:
            raise LabelError("difficulty_eval must be empty when human_check is 0")

    @property
    def key(self) -> str:
        """The key that gives this label on the Annotate page."""
        return LABEL_KEYS[self]

    def name(self, rewrite_type: str | None = None) -> str:
        """What the label means for a candidate of this rewrite type, e.g. "unsolvable · hard"."""
        acceptable = "acceptable" if rewrite_type in SOLVABLE_BY_DESIGN else "unsolvable"
        if self.human_check == 0:
            return "not acceptable"
        return f"{acceptable} · {'hard' if self.difficulty_eval == 1 else 'simple'}"


UNSOLVABLE_SIMPLE = Label(1, 0)
UNSOLVABLE_HARD = Label(1, 1)
NOT_ACCEPTABLE = Label(0, None)
# In the order the Annotate page offers them.
LABELS = (UNSOLVABLE_SIMPLE, UNSOLVABLE_HARD, NOT_ACCEPTABLE)
LABEL_KEYS = {UNSOLVABLE_SIMPLE: "1", UNSOLVABLE_HARD: "2", NOT_ACCEPTABLE: "0"}
SKIP_KEY = "S"
BACK_KEY = "B"
# Rewrite types whose candidates are meant to stay solvable: human_check = 1 means "answer unchanged".
SOLVABLE_BY_DESIGN = frozenset({RewriteType.distractor})


def label_name(human_check: int | None, difficulty_eval: int | None, rewrite_type: str | None = None) -> str:
    """The name of a stored (possibly unresolved) label; "—" when there is none, it is tied or it is broken."""
    try:
        return Label(human_check, difficulty_eval if human_check == 1 else None).name(rewrite_type)  # type: ignore[arg-type]
    except LabelError:
        return "—"


_DATA_ID_RE = re.compile(
    r"^(?P<source>[A-Za-z0-9][A-Za-z0-9\-.]*(?:_[A-Za-z][A-Za-z0-9\-.]*)*)_(?P<idx>\d+)_(?P<type>[A-Za-z]+)_(?P<k>\d+)$"
)

# Data sources `_DATA_ID_RE` took (`DataId.parse`), at most `_SOURCES_KEPT` of them.
_SOURCES: set[str] = set()
_SOURCES_KEPT = 1000


class DataId(NamedTuple):
    """A candidate's id, `{data_source}_{position}_{rewrite_type}_{k}` (ReliableMath's `data_id`).

    `position` is the problem's index in its source file (not its `id`); `k` counts conditions from 1. A named
    tuple: every record of an import parses one, and a frozen dataclass is several times slower to make.
    """

    data_source: str
    problem_position: int
    rewrite_type: str
    condition_index: int

    def __str__(self) -> str:
        return f"{self.data_source}_{self.problem_position}_{self.rewrite_type}_{self.condition_index}"

    @classmethod
    def parse(cls, text: str) -> DataId:
        """Raises ValueError with the reason when `text` is not a data_id."""
        # The last three parts hold no "_", so they are the text's last three; a data source the pattern took
        # before is taken again without it (an import's ids share a few sources). `isdecimal` is the pattern's \d.
        parts = text.rsplit("_", 3)
        if len(parts) == 4:
            source, idx, kind, k_text = parts
            if (source in _SOURCES and idx.isdecimal() and k_text.isdecimal() and kind.isascii() and kind.isalpha()
                    and (k := int(k_text)) >= 1):
                return tuple.__new__(cls, (source, int(idx), kind, k))
        match = _DATA_ID_RE.match(text)
        if not match:
            raise ValueError(f"{text!r} is not of the form {{source}}_{{index}}_{{remove|contradict}}_{{k}}")
        source, idx, kind, k_text = match.groups()
        k = int(k_text)
        if k < 1:
            raise ValueError(f"{text!r}: the condition number k counts from 1")
        if len(_SOURCES) < _SOURCES_KEPT:
            _SOURCES.add(source)
        # tuple.__new__: the named tuple's own __new__ is a Python call, and every record of an import parses one.
        return tuple.__new__(cls, (source, int(idx), kind, k))
