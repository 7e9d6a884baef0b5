"""The ReliableMath release layout: `solve.json`, `unsol.json` and per-source `solve/` and `unsol/` files.

Only candidates whose resolved label is human_check = 1 are released, and only those meant to be unsolvable:
for a solvable-by-design candidate (a GSM-IC `distractor`) human_check = 1 means "answer unchanged", so it
never goes into the `unsol` files (the `gsm-ic` export writes those). Files imported from a release are
written back in their own style (`annotator.formats.reliablemath.dumps`), byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator.files import write_file
from annotator.formats.reliablemath import FLOAT_DIFFICULTY, NAME, dumps
from annotator.store import (
    data_sources,
    iter_candidates,
    iter_problems,
    original_question_and_answer,
    source_file_options,
)
from annotator.vocabulary import SOLVABLE_BY_DESIGN


def solve_record(problem: dict[str, Any]) -> dict[str, Any]:
    record = {
        "data_source": problem["data_source"],
        "id": problem["source_id"],
        "question": problem["question"],
        "ground_truth": problem["ground_truth"],
    }
    if problem.get("solution") is not None:
        record["solution"] = problem["solution"]
    return record


def unsol_record(candidate: dict[str, Any]) -> dict[str, Any]:
    difficulty = candidate["difficulty_eval"]
    if (candidate.get("extra") or {}).get(FLOAT_DIFFICULTY):
        difficulty = float(difficulty)
    question, ground_truth = original_question_and_answer(candidate)
    return {
        "data_id": candidate["data_id"],
        "question": question,
        "rewritten_question": candidate["rewritten_question"],
        "ground_truth": ground_truth,
        "difficulty_eval": difficulty,
    }


def write_release(session: Session, out: Path) -> dict[str, int]:
    """The release layout; only unsolvable-by-design candidates whose resolved label is human_check = 1."""
    styles = source_file_options(session, format=NAME)
    counts: dict[str, int] = {}
    combined: dict[str, list[dict[str, Any]]] = {"solve": [], "unsol": []}
    for source in data_sources(session):
        per_source = {
            "solve": [solve_record(p) for p in iter_problems(session, data_source=source)],
            "unsol": [unsol_record(c) for c in iter_candidates(
                session, data_source=source, kept_only=True, exclude_rewrite_types=SOLVABLE_BY_DESIGN
            )],
        }
        for kind, records in per_source.items():
            name = f"{kind}/{source}.json"
            write_json(out / name, records, styles.get(name, {}))
            counts[name] = len(records)
            combined[kind].extend(records)
    for kind, records in combined.items():
        write_json(out / f"{kind}.json", records, styles.get(f"{kind}.json", {}))
        counts[f"{kind}.json"] = len(records)
    return counts


def write_json(path: Path, records: list[dict[str, Any]], style: dict[str, Any]) -> None:
    """A JSON array in the release's style (`indent=4`; non-ASCII escaped if `style` says so)."""
    write_file(path, dumps(records, ensure_ascii=bool(style.get("ensure_ascii"))))
