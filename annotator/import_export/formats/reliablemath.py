"""ReliableMath: the released dataset, and the record shapes its other files share (`check`, `annotation`).

Release layout (JSON arrays, `indent=4`):
  solve.json, solve/{source}.json  {"data_source", "id", "question", "ground_truth"[, "solution"]}
  unsol.json, unsol/{source}.json  {"data_id", "question", "rewritten_question", "ground_truth", "difficulty_eval"}
  math_instruction.json            {"role", "std", "real"}: the prompts, kept as they are (kind "instruction")
`data_id` is `{source}_{idx}_{remove|contradict}_{k}` with idx the problem's position in solve/{source}.json.
`solve.json` and `unsol.json` repeat the per-source files when both are there (`ImportPart.repeats` says so).
Released candidates were all human-checked (human_check = 1), so importing them records that label.
`annotator.import_export.exports.reliablemath` writes the release back, in the style `dumps` and `FLOAT_DIFFICULTY`
keep.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator._util.files import sha256_bytes
from annotator.database.vocabulary import DataId
from annotator.import_export.formats import _io
from annotator.import_export.formats._sheet_row import ordinary_candidate
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    InputError,
    LabelRecord,
    Location,
    ProblemRecord,
    ReadOptions,
    SourceFileInfo,
    check_json_value,
    label_in,
    optional_str,
    parse_data_id,
    parse_difficulty_eval,
    require,
    require_str,
)

NAME = "reliablemath"
RELEASE_ANNOTATOR = "import:reliablemath"
SOLVE_KEYS = ("data_source", "id", "question", "ground_truth", "solution")
UNSOL_KEYS = ("data_id", "question", "rewritten_question", "ground_truth", "difficulty_eval")
CHECK_KEY_RE = re.compile(r"^(?P<type>[a-z]+)_question_(?P<k>\d+)$")
# Marks a release candidate whose difficulty_eval was written as a float (1.0), so exports write it back so.
FLOAT_DIFFICULTY = "difficulty_eval_is_float"
# The release's prompts: no records, its text remembered whole (source file options) and written back as it was.
INSTRUCTION = "math_instruction.json"
INSTRUCTION_KIND = "instruction"


def dumps(records: list[dict[str, Any]], *, ensure_ascii: bool = False) -> str:
    """A release file's text: JSON arrays with `indent=4`, non-ASCII escaped or not as the file was."""
    return json.dumps(records, indent=4, ensure_ascii=ensure_ascii)


def _style(text: str, data: Any) -> dict[str, Any]:
    """How a release file was serialised (some files escape non-ASCII, others do not)."""
    for ensure_ascii in (False, True):
        if dumps(data, ensure_ascii=ensure_ascii) == text:
            return {"ensure_ascii": ensure_ascii}
    return {"ensure_ascii": False, "exact": False}


def is_release_dir(path: Path) -> bool:
    return path.is_dir() and any((path / name).exists() for name in ("solve.json", "unsol.json", "solve", "unsol"))


def release_files(path: Path) -> list[tuple[Path, str]]:
    """The release's files in import order, problems before candidates, with the name to remember."""
    files: list[Path] = []
    for kind in ("solve", "unsol"):
        if (path / f"{kind}.json").is_file():
            files.append(path / f"{kind}.json")
        if (path / kind).is_dir():
            files.extend(sorted((path / kind).glob("*.json")))
    if not files:
        raise InputError(str(path), "no ReliableMath release files (solve.json, unsol.json, solve/, unsol/) found")
    return [(file, file.relative_to(path).as_posix()) for file in files]


def kind_of(sample: dict[str, Any]) -> str | None:
    """Which ReliableMath record shape a record has, if any: solve, unsol, check or sheet."""
    keys = set(sample)
    if any(CHECK_KEY_RE.match(key) and isinstance(sample[key], dict) for key in keys):
        return "check"
    if "unsol_id" in keys or keys & {"rewritten_condition", "rewritten_condition:", "unsolvable_reason", "human_check"}:
        return "sheet"
    if {"data_id", "rewritten_question"} <= keys and keys <= set(UNSOL_KEYS):
        return "unsol"
    if {"data_source", "question", "ground_truth"} <= keys and "rewritten_question" not in keys:
        return "solve"
    if "rewritten_question" in keys:
        return "sheet"
    return None


def sample_kind(path: Path) -> str | None:
    """`kind_of` the first record of a file (None for a directory or an unreadable file)."""
    sample = _io.first_row(path)
    return None if sample is None else kind_of(sample)


def sniff(path: Path) -> bool:
    """A release directory, or a .json file of solve or unsol records."""
    if path.is_dir():
        return is_release_dir(path)
    return path.suffix.lower() == ".json" and sample_kind(path) in ("solve", "unsol")


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    return read_release(path)


def read_release(path: Path) -> list[ImportPart]:
    """A release directory (with its `math_instruction.json`, if any), or one release file (solve or unsol
    records)."""
    if not path.is_dir():
        return [_read_release_file(path, path.name)]
    files = release_files(path)
    parts = [_read_release_file(file, name) for file, name in files]
    names = {name for _file, name in files}
    for part, (_file, name) in zip(parts, files, strict=True):
        kind = name.split(".", 1)[0]
        per_source = sorted(other for other in names if other.startswith(f"{kind}/"))
        if "/" not in name and per_source:
            part.repeats = per_source  # solve.json holds solve/{source}.json's records, one after the other
    if (path / INSTRUCTION).is_file():
        parts.append(_instruction_part(path / INSTRUCTION))
    return parts


def _instruction_part(path: Path) -> ImportPart:
    """`math_instruction.json`: checked to be JSON, remembered byte for byte (its text in the file's options)."""
    _io.load_json(path)
    data = path.read_bytes()
    info = SourceFileInfo(NAME, INSTRUCTION, INSTRUCTION_KIND, sha256_bytes(data), {"text": data.decode("utf-8")})
    return ImportPart(str(path), [], info)


def _read_release_file(path: Path, name: str) -> ImportPart:
    text = _io.read_text(path)
    data = _io.load_json(path)
    rows = list(_io.json_array_rows(path, data))
    kind = kind_of(rows[0][1])
    if kind not in ("solve", "unsol"):
        raise rows[0][0].error("is neither a ReliableMath solve record nor an unsol record")
    info = SourceFileInfo(NAME, name, kind, sha256_bytes(text.encode("utf-8")), _style(text, data))
    records = _solve_records(rows) if kind == "solve" else _unsol_records(rows)
    return ImportPart(str(path), records, info)


def _solve_records(rows: list[_io.Row]) -> Iterator[ProblemRecord]:
    positions: dict[str, int] = defaultdict(int)
    for loc, obj in rows:
        problem = problem_from(obj, loc, position=None)
        # solve.json concatenates the per-source files, so a problem's position counts within its source.
        problem.position = positions[problem.data_source]
        positions[problem.data_source] += 1
        yield problem


def problem_from(obj: dict[str, Any], loc: Location, *, position: int | None) -> ProblemRecord:
    data_source = require_str(require(obj, "data_source", loc), loc, "data_source")
    source_id = check_json_value(obj.get("id"), loc, "id")
    question = require_str(require(obj, "question", loc), loc, "question")
    ground_truth = check_json_value(require(obj, "ground_truth", loc), loc, "ground_truth")
    solution = optional_str(obj.get("solution"), loc, "solution")
    extra = {k: v for k, v in obj.items() if k not in SOLVE_KEYS and not CHECK_KEY_RE.match(k)}
    return ProblemRecord(
        data_source=data_source,
        position=-1 if position is None else position,
        source_id=source_id,
        question=question,
        ground_truth=ground_truth,
        solution=solution,
        extra=extra or None,
        location=loc,
    )


def _unsol_records(rows: list[_io.Row]) -> Iterator[CandidateRecord]:
    positions: dict[str, int] = defaultdict(int)
    for loc, obj in rows:
        data_id = parse_data_id(require(obj, "data_id", loc), loc)
        difficulty_raw = require(obj, "difficulty_eval", loc)
        difficulty = parse_difficulty_eval(difficulty_raw, loc)
        if isinstance(difficulty_raw, str):
            raise loc.error(f"expected 0 or 1, got {difficulty_raw!r}", "difficulty_eval")
        record = candidate_from(
            data_id,
            loc,
            rewritten_question=require_str(require(obj, "rewritten_question", loc), loc, "rewritten_question"),
            question=require_str(require(obj, "question", loc), loc, "question"),
            ground_truth=check_json_value(require(obj, "ground_truth", loc), loc, "ground_truth"),
            label=LabelRecord(human_check=1, difficulty_eval=difficulty, annotator=RELEASE_ANNOTATOR),
            extra={FLOAT_DIFFICULTY: True} if isinstance(difficulty_raw, float) else None,
            position=positions[data_id.data_source],
        )
        positions[data_id.data_source] += 1
        yield record


def candidate_from(data_id: DataId, loc: Location, **fields: Any) -> CandidateRecord:
    """A candidate whose id fields (data source, problem position, rewrite type, k) come from its data_id."""
    return CandidateRecord(
        data_id=str(data_id),
        data_source=data_id.data_source,
        problem_position=data_id.problem_position,
        rewrite_type=data_id.rewrite_type,
        condition_index=data_id.condition_index,
        location=loc,
        **fields,
    )


def sheet_candidate(obj: dict[str, Any], loc: Location, *, annotator: str, position: int | None) -> CandidateRecord:
    """One row of an annotation sheet (Fig. 10 fields, `unsol_id` or `data_id`), labelled or not."""
    if (ordinary := ordinary_candidate(obj, loc, annotator=annotator, position=position)) is not None:
        return ordinary  # every field plain: checked at once (`_sheet_row`)
    return sheet_candidate_by_field(obj, loc, annotator=annotator, position=position)


def sheet_candidate_by_field(obj: dict[str, Any], loc: Location, *, annotator: str,
                             position: int | None) -> CandidateRecord:
    """`sheet_candidate` field by field: each field's rule, and the first bad field's error."""
    id_field = "unsol_id" if "unsol_id" in obj else "data_id"
    data_id = parse_data_id(require(obj, id_field, loc), loc, id_field)
    data_source = obj.get("data_source") or data_id.data_source
    if data_source != data_id.data_source:
        raise loc.error(f"{data_source!r} does not match the data source in {id_field} {str(data_id)!r}", "data_source")
    question = require_str(require(obj, "question", loc), loc, "question")
    ground_truth = check_json_value(obj.get("ground_truth"), loc, "ground_truth")
    condition_field = "rewritten_condition" if "rewritten_condition" in obj else "rewritten_condition:"
    solution = optional_str(obj.get("solution"), loc, "solution")
    record = candidate_from(
        data_id,
        loc,
        rewritten_question=require_str(require(obj, "rewritten_question", loc), loc, "rewritten_question"),
        rewritten_condition=optional_str(obj.get(condition_field), loc, condition_field),
        unsolvable_reason=optional_str(obj.get("unsolvable_reason"), loc, "unsolvable_reason"),
        extracted_condition=optional_str(obj.get("extracted_condition"), loc, "extracted_condition"),
        question=question,
        ground_truth=ground_truth,
        label=label_in(obj, loc, annotator=annotator),
        position=position,
        require_problem=False,
        problem=ProblemRecord(
            data_source=data_id.data_source,
            position=data_id.problem_position,
            question=question,
            ground_truth=ground_truth,
            solution=solution,
            location=loc,
        ),
    )
    if obj.get("rewrite_type") not in (None, "", data_id.rewrite_type):
        raise loc.error(f"{obj['rewrite_type']!r} does not match {id_field} {str(data_id)!r}", "rewrite_type")
    return record
