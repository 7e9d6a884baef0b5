"""The ReliableMath authors' intermediate `{source}_check.json`: each problem with its candidates nested.

A JSON array of solve records, each with `"remove_question_k": {"remove_question", "rewritten_condition",
"unsolvable_reason"[, "human_check", "difficulty_eval", "comment"]}` and `"contradict_question_k": {...}`;
other nested fields (a model's analysis...) are kept as the candidate's LLM outputs. The file is remembered
as a ReliableMath file of kind `check`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator._util.files import sha256_bytes
from annotator.database.vocabulary import DataId
from annotator.import_export.formats import _io
from annotator.import_export.formats.reliablemath import CHECK_KEY_RE, NAME, candidate_from, problem_from, sample_kind
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    Location,
    ProblemRecord,
    ReadOptions,
    SourceFileInfo,
    label_in,
    optional_str,
    require,
    require_str,
)


def sniff(path: Path) -> bool:
    return not path.is_dir() and sample_kind(path) == "check"


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    return [read_check(path, annotator=options.annotator_for(path))]


def read_check(path: Path, *, annotator: str) -> ImportPart:
    """The authors' `{source}_check.json`: problems with nested `remove_question_k` / `contradict_question_k`."""
    rows = list(_io.json_array_rows(path))
    text = path.read_bytes()
    info = SourceFileInfo(NAME, path.name, "check", sha256_bytes(text))

    def records() -> Iterator[ProblemRecord | CandidateRecord]:
        positions: dict[str, int] = defaultdict(int)
        for loc, obj in rows:
            problem = problem_from(obj, loc, position=None)
            problem.position = (
                int(obj["position"]) if isinstance(obj.get("position"), int) else positions[problem.data_source]
            )
            positions[problem.data_source] += 1
            yield problem
            yield from _nested_candidates(problem, obj, loc, annotator=annotator)

    return ImportPart(str(path), records(), info)


def _nested_candidates(
    problem: ProblemRecord, obj: dict[str, Any], loc: Location, *, annotator: str
) -> Iterator[CandidateRecord]:
    for key, nested in obj.items():
        match = CHECK_KEY_RE.match(key)
        if not match or not isinstance(nested, dict):
            continue
        rewrite_type, k = match["type"], int(match["k"])
        field_loc = Location(loc.path, f"{loc.record}, {key}")
        data_id = DataId(problem.data_source, problem.position, rewrite_type, k)
        question_key = f"{rewrite_type}_question"
        known = {
            question_key,
            "rewritten_condition",
            "unsolvable_reason",
            "human_check",
            "difficulty_eval",
            "comment",
        }
        yield candidate_from(
            data_id,
            field_loc,
            rewritten_question=require_str(require(nested, question_key, field_loc), field_loc, question_key),
            rewritten_condition=optional_str(nested.get("rewritten_condition"), field_loc, "rewritten_condition"),
            unsolvable_reason=optional_str(nested.get("unsolvable_reason"), field_loc, "unsolvable_reason"),
            question=problem.question,
            ground_truth=problem.ground_truth,
            label=label_in(nested, field_loc, annotator=annotator),
            llm_outputs={k2: v for k2, v in nested.items() if k2 not in known} or None,
        )
