"""Transcripts for tests: real response shapes with chosen verdicts, written as the JSONL the import reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from annotator.db import read_session
from annotator.formats import read
from annotator.importer import import_parts
from annotator.transcripts import evaluation_items

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
