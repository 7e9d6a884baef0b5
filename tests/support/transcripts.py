"""Transcripts for tests: rows with judge fields as the judge would fill them (review, page and browser tests),
and real response shapes with chosen verdicts written as the JSONL the import reads (judge and report tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate, Problem, Transcript, utcnow
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.transcripts import evaluation_items
from tests.support.candidates import add_candidates

# What a judge gives each class on an unsolvable item (ReliableMath Table 1).
UNSOLVABLE_VERDICTS = {"unsolvable": "S", "unknown": "R", "correct": "F", "incorrect": "F", "unmatched": "F"}


def add_transcripts(
    engine: Engine, specs: list[dict[str, Any]], *, data_source: str = "math", start: int = 0
) -> list[int]:
    """One candidate (and its problem) per spec, and one transcript of each, on the candidate or, with
    `"solvable": True`, on its problem; returns the transcript ids in order.

    A spec may set any `Transcript` column; `judge_class` defaults to "incorrect" and `judge` to the verdict
    the class gives on an unsolvable item (on a solvable one, set `judge` yourself).
    """
    candidate_ids = add_candidates(engine, len(specs), data_source=data_source, start=start)
    now = utcnow()
    with write_session(engine) as session:
        candidates = {
            row.id: row
            for row in session.execute(
                select(Candidate.id, Candidate.data_id, Candidate.problem_id, Problem.data_source, Problem.position)
                .join(Problem, Problem.id == Candidate.problem_id)
                .where(Candidate.id.in_(candidate_ids))
            )
        }
        rows = []
        for candidate_id, spec in zip(candidate_ids, specs):
            spec = dict(spec)
            candidate = candidates[candidate_id]
            solvable = spec.pop("solvable", False)
            judge_class = spec.setdefault("judge_class", "incorrect")
            spec.setdefault("judge", UNSOLVABLE_VERDICTS.get(judge_class) if judge_class else None)
            rows.append(
                {
                    "data_id": f"{candidate.data_source}_{candidate.position}" if solvable else candidate.data_id,
                    "problem_id": candidate.problem_id,
                    "candidate_id": None if solvable else candidate_id,
                    "model": "model-a",
                    "prompt": "standard",
                    "sample": 0,
                    "response": "The answer is $\\boxed{4}$.",
                    "extracted_answer": "4",
                    "judge_rule": "reliablemath",
                    "judge_version": "1",
                    "rules_disagree": False,
                    "source": "test",
                    "created_at": now,
                    **spec,
                }
            )
        session.execute(insert(Transcript), rows)
        data_ids = [row["data_id"] for row in rows]
        found = dict(
            session.execute(
                select(Transcript.data_id, Transcript.id).where(Transcript.data_id.in_(data_ids))
            ).all()
        )
        return [found[data_id] for data_id in data_ids]


UNSOLVABLE = "I cannot find D without the tangents, so \\boxed{it\u2019s unsolvable}"
UNKNOWN = "This is beyond me: \\boxed{sorry, I don\u2019t know}"


def response(ground_truth: Any, verdict: str, *, unsolvable: bool, index: int = 0) -> str:
    """A response the judge gives `verdict` on an item with this ground truth.

    Failures alternate between a wrong (or, on an unsolvable item, the original) answer and no boxed answer.
    """
    if verdict == "R":
        return UNKNOWN
    if verdict == "S":
        return UNSOLVABLE if unsolvable else f"Step by step... so the answer is \\boxed{{{ground_truth}}}."
    if index % 2:
        return "After a long derivation the value is 12, I think."  # unmatched
    if unsolvable:
        return f"Assuming the missing value, we get \\boxed{{{ground_truth}}}."  # the original answer
    return f"Therefore \\boxed{{{int(float(str(ground_truth))) + 1}}}."


def records_for(
    engine: Engine, *, data_source: str, model: str, prompt: str, a: tuple[int, int, int], u: tuple[int, int, int]
) -> list[dict[str, Any]]:
    """One response per item of the data source: the A items get S/R/F in the counts `a`, the U items `u`."""
    with read_session(engine) as session:
        items = list(evaluation_items(session, data_source=data_source))
    records = []
    for unsolvable, counts in ((False, a), (True, u)):
        subset = [item for item in items if item.unsolvable == unsolvable]
        verdicts = ["S"] * counts[0] + ["R"] * counts[1] + ["F"] * counts[2]
        assert len(verdicts) == len(subset), f"{data_source}: {len(subset)} items, counts {counts}"
        for index, (item, verdict) in enumerate(zip(subset, verdicts)):
            records.append({
                "data_id": item.data_id, "model": model, "prompt": prompt,
                "response": response(item.ground_truth, verdict, unsolvable=unsolvable, index=index),
            })
    return records


def import_records(engine: Engine, path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    import_parts(read(path), engine=engine)
