"""Annotation sheets (Fig. 10), the authors' nested check files, and flat tables with --map (exports:
tests/import_export/exports)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import read_session
from annotator.database.models import Annotation, Annotator, Candidate, Problem
from annotator.import_export.formats import ReadOptions, detect, read
from annotator.import_export.formats.table import parse_mapping
from annotator.import_export.importer import import_parts
from tests.support.sheets import CHECK, sheet_rows


def test_check_file_imports_problems_candidates_and_labels(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "math_check.json"
    path.write_text(json.dumps(CHECK), encoding="utf-8")
    assert detect(path) == "check"
    summary = import_parts(read(path, options=ReadOptions(annotator="alice")), engine=engine)
    assert (summary.problems_added, summary.candidates_added, summary.labels_added) == (2, 3, 2)
    with read_session(engine) as session:
        candidates = {c.data_id: c for c in session.execute(select(Candidate)).scalars()}
        assert set(candidates) == {"math_0_remove_1", "math_0_contradict_1", "math_1_remove_1"}
        contradict = candidates["math_0_contradict_1"]
        assert contradict.rewritten_question.startswith("If $a = 2$, $a = 5$")
        assert contradict.llm_outputs == {"analysis": "the model's analysis"}
        assert (contradict.human_check, contradict.difficulty_eval) == (0, None)
        assert candidates["math_0_remove_1"].label_count == 0
        assert (candidates["math_1_remove_1"].human_check, candidates["math_1_remove_1"].difficulty_eval) == (1, 1)
        alice = session.execute(select(Annotator).where(Annotator.name == "alice")).scalar_one()
        assert session.execute(select(Annotation).where(Annotation.annotator_id == alice.id)).all()
        assert session.execute(select(Problem.source_id).order_by(Problem.position)).scalars().all() == [11, 12]


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_annotation_sheet_with_and_without_labels(sqlite_engine: Engine, tmp_path: Path, suffix: str) -> None:
    rows = sheet_rows()
    path = tmp_path / f"sheet{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    assert detect(path) == "annotation"
    summary = import_parts(read(path), engine=sqlite_engine)
    assert (summary.problems_added, summary.candidates_added, summary.labels_added) == (1, 2, 1)
    with read_session(sqlite_engine) as session:
        labelled, unlabelled = session.execute(select(Candidate).order_by(Candidate.id)).scalars().all()
        assert (labelled.human_check, labelled.difficulty_eval, labelled.rewritten_condition) == (1, 0, "buys 4 more")
        assert unlabelled.label_count == 0 and unlabelled.human_check is None
        problem = session.get(Problem, labelled.problem_id)
        assert (problem.data_source, problem.position, problem.ground_truth) == ("gsm", 4, "7")
    # The same sheet again changes nothing.
    again = import_parts(read(path), engine=sqlite_engine)
    assert (again.candidates_added, again.labels_added, again.candidates_updated) == (0, 0, 0)


def test_excel_style_sheet_columns(sqlite_engine: Engine, tmp_path: Path) -> None:
    row = sheet_rows()[0]
    row["data_id"] = row.pop("unsol_id")
    row["rewritten_condition:"] = row.pop("rewritten_condition")
    row["solution"] = "3 + 4 = 7"
    path = tmp_path / "excel.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    import_parts(read(path), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        candidate = session.execute(select(Candidate)).scalar_one()
        assert candidate.rewritten_condition == "buys 4 more"
        assert session.get(Problem, candidate.problem_id).solution == "3 + 4 = 7"


def test_generic_table_with_mapping(sqlite_engine: Engine, tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(
        "".join(
            json.dumps({"src": "mine", "problem": f"What is {i} + {i}?", "answer": 2 * i}) + "\n" for i in range(3)
        ),
        encoding="utf-8",
    )
    options = ReadOptions(mapping=parse_mapping("data_source=src,question=problem,ground_truth=answer"))
    summary = import_parts(read(problems, options=options), engine=sqlite_engine)
    assert summary.problems_added == 3
    with read_session(sqlite_engine) as session:
        stored = session.execute(
            select(Problem.position, Problem.question, Problem.ground_truth).order_by(Problem.position)
        ).all()
    assert stored == [(i, f"What is {i} + {i}?", 2 * i) for i in range(3)]

    candidates = tmp_path / "rewrites.jsonl"
    candidates.write_text(
        json.dumps(
            {"id": "mine_2_remove_1", "src": "mine", "problem": "What is 2 + 2?", "answer": 4, "rw": "What is 2 + x?"}
        )
        + "\n",
        encoding="utf-8",
    )
    options = ReadOptions(
        mapping=parse_mapping("data_id=id,data_source=src,question=problem,ground_truth=answer,rewritten_question=rw")
    )
    import_parts(read(candidates, options=options), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        candidate = session.execute(select(Candidate)).scalar_one()
        assert candidate.rewritten_question == "What is 2 + x?" and candidate.ground_truth == 4
        assert session.get(Problem, candidate.problem_id).position == 2


def test_mapping_to_a_missing_column_names_it(sqlite_engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"problem": "1+1?", "answer": 2}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"p\.jsonl: line 1: field 'text': the column 'text'"):
        list(read(path, options=ReadOptions(mapping={"question": "text"}))[0].records)
    with pytest.raises(ValueError, match="not of the form field=column"):
        parse_mapping("question")
