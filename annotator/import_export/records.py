"""What every reader takes (`ReadOptions`) and yields (problems, candidates, labels, grouped in import parts),
and the checks every reader applies to its input."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from annotator.database import names
from annotator.database.vocabulary import DataId
from annotator.settings import limits

# A text field larger than this is rejected: no real problem is that long, and it keeps a broken or
# hostile file from filling the database.
MAX_TEXT_CHARS = 1_000_000


class InputError(ValueError):
    """Bad input: names the file, the record and the field, so the user can find and fix it."""

    def __init__(self, path: str, message: str, *, record: str | None = None, field: str | None = None) -> None:
        self.path = path
        self.record = record
        self.field = field
        self.message = message
        where = [str(path)]
        if record is not None:
            where.append(record)
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{': '.join(where)}: {message}")


class InputErrors(InputError):
    """Several files' errors at once (each file's first), one line each; `errors` holds them."""

    def __init__(self, errors: list[InputError]) -> None:
        first = errors[0]
        super().__init__(first.path, first.message, record=first.record, field=first.field)
        self.errors = errors
        self.args = ("\n".join(str(error) for error in errors),)

    def __str__(self) -> str:
        return str(self.args[0])

    @staticmethod
    def of(errors: list[InputError]) -> InputError:
        """One error as itself, several as one `InputErrors`."""
        return errors[0] if len(errors) == 1 else InputErrors(errors)


class Location(NamedTuple):
    """Where a record came from: a file and the record's place in it, counted from 1 everywhere: "record N" in a
    JSON array, "line N" in JSONL, "row N" in a sheet (CSV and Excel as a spreadsheet shows them, the header
    being row 1; Parquet from its first row). A named tuple: every record has one, and a frozen dataclass is
    several times slower to make."""

    path: str
    record: str  # e.g. "record 12", "line 13" or "row 14"

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(self.path, message, record=self.record, field=field)


@dataclass
class ProblemRecord:
    data_source: str
    position: int
    question: str
    ground_truth: Any
    source_id: Any = None
    solution: str | None = None
    extra: dict[str, Any] | None = None
    location: Location | None = None


@dataclass
class LabelRecord:
    human_check: int
    difficulty_eval: int | None
    annotator: str  # an annotator's name; system annotators are created on demand
    comment: str | None = None
    # The annotator must already have an account (an Excel batch names a person, not an import).
    account: bool = False


@dataclass
class CandidateRecord:
    data_id: str
    data_source: str
    problem_position: int
    rewrite_type: str
    condition_index: int | None
    rewritten_question: str | None  # None only when `label_only`
    rewritten_condition: str | None = None
    unsolvable_reason: str | None = None
    extracted_condition: str | None = None
    question: str | None = None
    ground_truth: Any = None
    llm_outputs: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None
    position: int | None = None
    label: LabelRecord | None = None
    # A problem to create when the candidate's source carries its original (annotation sheets do).
    problem: ProblemRecord | None = None
    require_problem: bool = True
    location: Location | None = None
    # The candidate must already exist and only its label is imported (an Excel batch: the other cells are
    # there to be read, not edited).
    label_only: bool = False


def parse_data_id(value: Any, loc: Location, field_name: str = "data_id") -> DataId:
    """Parse `{source}_{idx}_{type}_{k}`, where idx is the problem's position in its source file."""
    text = require_str(value, loc, field_name)
    try:
        return DataId.parse(text)
    except ValueError as exc:
        raise loc.error(str(exc), field_name) from None


def require(obj: dict[str, Any], key: str, loc: Location) -> Any:
    if key not in obj:
        raise loc.error("missing required field", key)
    return obj[key]


def require_str(value: Any, loc: Location, field_name: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise loc.error(f"expected text, got {type(value).__name__} {_preview(value)}", field_name)
    # Empty or blank, without the copy `strip` makes (every record's every text field comes here).
    if not allow_empty and (not value or value.isspace()):
        raise loc.error("is empty", field_name)
    if len(value) > MAX_TEXT_CHARS:
        check_size(value, loc, field_name)
    return value


def optional_str(value: Any, loc: Location, field_name: str) -> str | None:
    if value is None or value == "":
        return None
    return require_str(value, loc, field_name)


def check_size(value: str, loc: Location, field_name: str) -> None:
    if len(value) > MAX_TEXT_CHARS:
        raise loc.error(f"is {len(value):,} characters long; the limit is {MAX_TEXT_CHARS:,}", field_name)


def check_json_value(value: Any, loc: Location, field_name: str) -> Any:
    """A value kept with its JSON type (e.g. `ground_truth`): str, number, bool or list of those."""
    if isinstance(value, str):
        check_size(value, loc, field_name)
    elif isinstance(value, list):
        for item in value:
            check_json_value(item, loc, field_name)
    elif isinstance(value, dict):
        for item in value.values():
            check_json_value(item, loc, field_name)
    elif value is not None and not isinstance(value, (int, float, bool)):
        raise loc.error(f"unsupported value of type {type(value).__name__}", field_name)
    # JSON has no NaN or infinity (a number like 1e999 parses to one): it could not be stored or written back.
    if isinstance(value, float) and (value != value or value in (math.inf, -math.inf)):
        raise loc.error(f"is {value!r}, which JSON cannot hold", field_name)
    return value


def parse_human_check(value: Any, loc: Location, field_name: str = "human_check") -> int:
    return _parse_binary(value, loc, field_name, "1 (acceptable) or 0 (not acceptable)")


def parse_difficulty_eval(value: Any, loc: Location, field_name: str = "difficulty_eval") -> int:
    return _parse_binary(value, loc, field_name, "0 (simple) or 1 (hard)")


def _parse_binary(value: Any, loc: Location, field_name: str, meaning: str) -> int:
    if type(value) is int and (value == 0 or value == 1):  # the common case, first (a bool is not an int here)
        return value
    # Spreadsheets give 1.0 or "1"; accept those, nothing else.
    if isinstance(value, bool):
        raise loc.error(f"expected {meaning}, got {value!r}", field_name)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1", "0.0", "1.0"):
        return int(float(value))
    raise loc.error(f"expected {meaning}, got {_preview(value)}", field_name)


def parse_label(
    human_check: Any, difficulty_eval: Any, loc: Location, *, annotator: str, comment: str | None = None
) -> LabelRecord | None:
    """A label from optional `human_check` / `difficulty_eval` fields; None when neither is filled in."""
    empty = (None, "")
    if human_check in empty:
        if difficulty_eval not in empty:
            raise loc.error("difficulty_eval is given but human_check is empty", "human_check")
        return None
    check = parse_human_check(human_check, loc)
    if check == 1:
        if difficulty_eval in empty:
            raise loc.error("is required when human_check is 1", "difficulty_eval")
        difficulty: int | None = parse_difficulty_eval(difficulty_eval, loc)
    else:
        if difficulty_eval not in empty:
            raise loc.error("must be empty when human_check is 0", "difficulty_eval")
        difficulty = None
    return LabelRecord(human_check=check, difficulty_eval=difficulty, annotator=annotator, comment=comment)


def label_in(obj: dict[str, Any], loc: Location, *, annotator: str) -> LabelRecord | None:
    """The label a record carries in its `human_check`, `difficulty_eval` and `comment` fields, if any."""
    return parse_label(
        obj.get("human_check"),
        obj.get("difficulty_eval"),
        loc,
        annotator=annotator,
        comment=optional_str(obj.get("comment"), loc, "comment"),
    )


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class SourceFileInfo:
    """A file as the database remembers it (see `models.SourceFile`)."""

    format: str
    name: str
    kind: str
    sha256: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Oddity:
    """Something unusual a reader accepted and kept as given, named in the import summary with its count
    (`2 unanswerable records with a non-null answer, kept as given`)."""

    one: str  # after the count 1: "unanswerable record with a non-null answer, kept as given"
    many: str  # after any other count

    def describe(self, count: int) -> str:
        return f"{count} {self.one if count == 1 else self.many}"


@dataclass
class TranscriptRecord:
    """One model response to one item, made elsewhere (a JSONL file, an Inspect AI log).

    `data_id` names the item: a candidate's `data_id`, or `{data_source}_{position}` for a solvable problem.
    """

    data_id: str
    model: str
    prompt: str
    response: str
    sample: int = 0
    reasoning: str | None = None
    params: dict[str, Any] | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    source: str = "transcripts"  # the format it came from
    location: Location | None = None

    @property
    def key(self) -> tuple[str, str, str, int]:
        """What makes a transcript unique: the item, the model, the prompt and the sample number."""
        return (self.data_id, self.model, self.prompt, self.sample)


def optional_int(value: Any, loc: Location, field_name: str, *, minimum: int = 0) -> int | None:
    """A whole number of at least `minimum`, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise loc.error(f"expected a whole number >= {minimum}, got {_preview(value)}", field_name)
    return value


@dataclass
class ReadOptions:
    """What the user said about the files (`import --map`, `--annotator`, `--data-source`), for every reader."""

    mapping: dict[str, str] = field(default_factory=dict)
    # Who the labels in a labelled sheet belong to; an unknown name becomes a system annotator.
    annotator: str | None = None
    data_source: str | None = None
    # Transcripts from a harness (lm_eval, openai_batch): the model and prompt names to store them under instead
    # of the ones the files give, and how an lm-eval doc names its item (a doc field, or a doc_id -> data_id file).
    model: str | None = None
    prompt: str | None = None
    id_field: str | None = None
    id_map: Path | None = None

    def __post_init__(self) -> None:
        """The names given are names (`annotator.database.names`); a ValueError naming the option otherwise."""
        for option, value in (("--annotator", self.annotator), ("--data-source", self.data_source),
                              ("--model", self.model), ("--prompt", self.prompt)):
            if value is not None:
                names.check(value, what=option)

    def annotator_for(self, path: Path) -> str:
        """Whose labels the file at `path` holds: the given name, else a pseudo-annotator for the file (named
        after it, any character no name may hold written as its escape)."""
        return self.annotator or f"import:{names.cleaned(path.name)}"


@dataclass
class ImportPart:
    """One file's records. A reader counts the oddities it accepts in `oddities` while it yields the records
    (so the counts are complete once `records` is exhausted)."""

    path: str
    records: Iterable[ProblemRecord | CandidateRecord | TranscriptRecord]
    source_file: SourceFileInfo | None = None
    oddities: Counter[Oddity] = field(default_factory=Counter)
    # The other files of the same import whose records this one repeats (a release's solve.json holds those of
    # solve/{source}.json): a preview counts them once.
    repeats: list[str] = field(default_factory=list)


def check_name(value: str, loc: Location, field_name: str) -> str:
    """`value` when it may be a name (`annotator.database.names`: a model, prompt, data source or annotator); InputError
    naming the record and field otherwise."""
    if (why := names.problem(value)) is not None:
        raise loc.error(f"{names.shown(value)} {why}", field_name)
    return value


def _check_names(record: ProblemRecord | CandidateRecord | TranscriptRecord, loc: Location) -> None:
    """InputError naming the first of the record's names that is no name, with its field."""
    held: list[tuple[str | None, str]]
    if isinstance(record, ProblemRecord):
        held = [(record.data_source, "data_source")]
    elif isinstance(record, TranscriptRecord):
        held = [(record.data_id, "data_id"), (record.model, "model"), (record.prompt, "prompt")]
    else:
        held = [(record.data_source, "data_source"),
                (record.label.annotator if record.label is not None else None, "annotator")]
    for name, field_name in held:
        if name:
            check_name(name, loc, field_name)


def _check_ranges(record: ProblemRecord | CandidateRecord | TranscriptRecord) -> None:
    """Refuse an integer outside its range (`annotator.settings.limits`) before it reaches a 32-bit column, and a name
    no name may be (`annotator.database.names`) before one database stores it and the other refuses it."""
    loc = record.location or Location("?", "?")
    checks: list[tuple[Any, limits.Range, str, str]] = []  # value, range, what, field
    # `isprintable` is the rule's first step, in C: every record's names pass it without a call of ours.
    if isinstance(record, ProblemRecord):
        if not record.data_source.isprintable():
            _check_names(record, loc)
        checks.append((record.position, limits.POSITION, "position", "position"))
    elif isinstance(record, TranscriptRecord):
        if not (record.data_id.isprintable() and record.model.isprintable() and record.prompt.isprintable()):
            _check_names(record, loc)
        checks += [(record.sample, limits.SAMPLE, "sample", "sample"),
                   (record.prompt_tokens, limits.TOKENS, "prompt_tokens", "prompt_tokens"),
                   (record.completion_tokens, limits.TOKENS, "completion_tokens", "completion_tokens")]
    else:
        if not (record.data_source.isprintable() and (record.label is None or record.label.annotator.isprintable())):
            _check_names(record, loc)
        checks += [(record.problem_position, limits.POSITION, "the problem's position", "data_id"),
                   (record.condition_index, limits.CONDITION_INDEX, "the condition number k", "data_id"),
                   (record.position, limits.POSITION, "position", "position")]
        problem = record.problem
        # A sheet's row carries its problem with the candidate's own data source and position: checked above.
        if problem is not None and (problem.data_source != record.data_source
                                    or problem.position != record.problem_position):
            _check_ranges(problem)
    for value, allowed, what, field_name in checks:
        # An int in range passes without the full rule (`Range.contains`): every record has a few.
        if value is None or (type(value) is int and allowed.low <= value <= allowed.high):
            continue
        if not allowed.contains(value):
            raise loc.error(f"{what} must be {allowed.describe()}, got {_preview(value)}", field_name)


def _plain_candidate(record: CandidateRecord) -> bool:
    """Whether `_check_ranges` passes the candidate without a look at each rule: its names printable, its integers
    plain ints in range, its problem (if any) at its own data source and position (most records of a sheet)."""
    position, k, problem, low, high = record.position, record.condition_index, record.problem, *_POSITIONS
    return (record.data_source.isprintable() and (record.label is None or record.label.annotator.isprintable())
            and type(record.problem_position) is int and low <= record.problem_position <= high
            and type(k) is int and limits.CONDITION_INDEX.low <= k <= limits.CONDITION_INDEX.high
            and (position is None or (type(position) is int and low <= position <= high))
            and (problem is None or (problem.data_source == record.data_source
                                     and problem.position == record.problem_position)))


_POSITIONS = (limits.POSITION.low, limits.POSITION.high)


def in_range(
    records: Iterable[ProblemRecord | CandidateRecord | TranscriptRecord],
) -> Iterator[ProblemRecord | CandidateRecord | TranscriptRecord]:
    """The records as they come, each checked against the ranges of its integers and the rule for names (every
    reader's parts pass through this: `formats.read`)."""
    for record in records:
        if type(record) is not CandidateRecord or not _plain_candidate(record):
            _check_ranges(record)
        yield record
