"""Flat tables (JSONL, CSV, Parquet): annotation-sheet rows, or solvable problems, with a column mapping.

`--map question=problem_text,ground_truth=answer` renames the file's columns to ours. A row with a
`rewritten_question` is a candidate (annotation-sheet fields); a row without one is a solvable problem.
CSV and Parquet cannot keep a JSON type in a cell, so flat exports (`annotator.import_export.exports.table`) write
`ground_truth_json` (the value as JSON text) there; importing such a file decodes it again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator._util.files import sha256_file
from annotator.import_export.formats import _io
from annotator.import_export.formats.reliablemath import kind_of, problem_from, sample_kind, sheet_candidate
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    Location,
    ProblemRecord,
    ReadOptions,
    SourceFileInfo,
)

# Columns whose JSON type a CSV or Parquet cell cannot keep: flat files hold them as `{name}_json` text.
JSON_ENCODED = {"ground_truth", "source_id"}
JSON_ENCODED_NAMES = frozenset(f"{key}_json" for key in JSON_ENCODED)


def parse_mapping(text: str | None) -> dict[str, str]:
    """`ours=theirs,...` into {ours: theirs}."""
    mapping: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        ours, sep, theirs = part.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            raise ValueError(f"--map entry {part!r} is not of the form field=column")
        mapping[ours.strip()] = theirs.strip()
    return mapping


def _mapped(obj: dict[str, Any], mapping: dict[str, str], loc: Location) -> dict[str, Any]:
    if not mapping and "" not in obj.values() and not JSON_ENCODED_NAMES & obj.keys():
        return obj  # nothing to rename, empty or decode: the row as read (`records` copies it to change it)
    if mapping:
        renamed = {key: value for key, value in obj.items() if key not in mapping.values()}
        for ours, theirs in mapping.items():
            if theirs not in obj:
                raise loc.error(f"the column {theirs!r} named by --map {ours}={theirs} is not in this record", theirs)
            renamed[ours] = obj[theirs]
        obj = renamed
    # Empty cells in CSV mean "no value" (a copy: the reader's row is left as it was).
    row = {key: (None if value == "" else value) for key, value in obj.items()}
    for key in JSON_ENCODED:
        encoded = row.pop(f"{key}_json", None)
        if encoded is not None:  # an empty cell is None by now
            value = _io.load_value(encoded, loc, f"{key}_json")
            row[key] = None if value == "" else value
    return row


def sniff(path: Path) -> bool:
    """A file whose first record is a solvable problem (data_source, question, ground_truth)."""
    return not path.is_dir() and sample_kind(path) == "solve"


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    """A flat table: its candidate rows (annotation-sheet fields) and its problem rows."""
    annotator = options.annotator_for(path)
    return [read_table(path, mapping=options.mapping, annotator=annotator, data_source=options.data_source)]


def read_table(path: Path, *, mapping: dict[str, str], annotator: str, data_source: str | None = None) -> ImportPart:
    info = SourceFileInfo("table", path.name, "table", sha256_file(path), {"mapping": mapping} if mapping else {})

    def records() -> Iterator[ProblemRecord | CandidateRecord]:
        positions: dict[str, int] = defaultdict(int)
        for index, (loc, obj) in enumerate(_io.rows(path)):
            row = _mapped(obj, mapping, loc)
            if data_source and not row.get("data_source"):
                row = {**row, "data_source": data_source}
            if row.get("rewritten_question") is not None:
                yield sheet_candidate(row, loc, annotator=annotator, position=index)
                continue
            if kind_of({k: v for k, v in row.items() if v is not None}) != "solve":
                raise loc.error(
                    "is neither a candidate (no rewritten_question) nor a problem (needs data_source, question and "
                    "ground_truth); name the columns with --map, e.g. --map question=problem,ground_truth=answer"
                )
            problem = problem_from(row, loc, position=None)
            given = row.get("problem_position", row.get("position"))
            problem.position = (
                _int(given, loc, "problem_position") if given is not None else positions[problem.data_source]
            )
            positions[problem.data_source] += 1
            yield problem

    return ImportPart(str(path), records(), info)


def _int(value: Any, loc: Location, field: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise loc.error(f"expected a whole number, got {value!r}", field) from None
    if number < 0 or (isinstance(value, float) and value != number):
        raise loc.error(f"expected a whole number >= 0, got {value!r}", field)
    return number
