"""An import of transcripts whose answers the judge cannot compare everywhere: every one is stored with a verdict,
and the summary says how many (ground truth, answer) pairs were left undecided."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Transcript
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.transcripts import Item, evaluation_items
from tests.support.transcripts import import_records

ITEMS = 12


def _minerva_unsolvable(engine: Engine, shared_data: Path) -> list[Item]:
    """Minerva's unsolvable items: the release stores their ground truths in a list's text."""
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "minerva.json"), *read(release / "unsol" / "minerva.json")], engine=engine)
    with read_session(engine) as session:
        return [item for item in evaluation_items(session, data_source="minerva") if item.unsolvable]


def test_odd_answers_never_fail_an_import_and_the_undecided_pairs_are_counted(
    engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    items = _minerva_unsolvable(engine, shared_data)[:ITEMS]
    assert all(str(item.ground_truth).startswith("['") for item in items)
    answers = {
        "echo": lambda truth: truth.replace("\\\\", "\\"),  # the list written out in LaTeX: a NaN for sympy
        "tower": lambda truth: "9^{9^{9}}",
        "undecidable": lambda truth: "10^{10^{10}} - 10^{10^{10}}",
    }
    records = [{"data_id": item.data_id, "model": model, "prompt": "standard",
                "response": f"So the answer is $\\boxed{{{answer(str(item.ground_truth))}}}$."}
               for item in items for model, answer in answers.items()]
    import_records(engine, tmp_path / "odd.jsonl", records)
    with read_session(engine) as session:
        stored = dict(session.execute(select(Transcript.model, func.count()).where(Transcript.judge.is_not(None))
                                      .group_by(Transcript.model)).all())
        undecided = session.execute(select(func.count()).where(Transcript.extracted_answer.like("10^{10^{10}} -%"),
                                                               Transcript.judge == "F")).scalar_one()
    assert stored == {model: ITEMS for model in answers}
    assert undecided == ITEMS  # an undecided pair counts as incorrect


def test_the_import_summary_names_the_undecided_pairs(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    items = _minerva_unsolvable(engine, shared_data)[:3]
    path = tmp_path / "odd.jsonl"
    records = [{"data_id": item.data_id, "model": "m", "prompt": "standard",
                "response": "\\boxed{10^{10^{10}} - 10^{10^{10}}}"} for item in items]
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    summary = import_parts(read(path), engine=engine)
    assert summary.transcripts_added == 3 and summary.pairs_undecided == len({str(i.ground_truth) for i in items})
    assert f"{summary.pairs_undecided} distinct (ground truth, answer) pairs ran out of time" in summary.text()
