"""The ReliableMath release in and out, byte for byte, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session
from annotator.database.models import Annotation, Annotator, Candidate, Problem
from annotator.figures.stats import compute
from annotator.import_export.formats import InputError, read
from annotator.import_export.importer import import_parts
from tests.support.release import import_release


def test_release_labels_are_recorded_by_an_import_annotator(engine: Engine, shared_data: Path) -> None:
    import_release(engine, shared_data / "reliablemath")
    with read_session(engine) as session:
        annotator = session.execute(select(Annotator).where(Annotator.name == "import:reliablemath")).scalar_one()
        assert annotator.is_system and annotator.password_hash is None
        assert session.execute(select(func.count()).select_from(Annotation)).scalar() == 1102
        kept = session.execute(select(func.count()).where(Candidate.human_check == 1)).scalar()
        assert kept == 1102
        stats = compute(session)
    assert stats["problems"] == 313
    assert stats["total"]["hard"] + stats["total"]["simple"] == 1102
    assert list(stats["sources"]) == ["aime", "amc", "math", "minerva"]


def test_release_quirks_are_kept(engine: Engine, shared_data: Path) -> None:
    import_release(engine, shared_data / "reliablemath")
    with read_session(engine) as session:
        amc = session.execute(select(Problem.ground_truth).where(Problem.data_source == "amc", Problem.position == 0))
        assert isinstance(amc.scalar_one(), float)
        minerva = session.execute(select(Candidate).where(Candidate.data_id == "minerva_7_remove_1")).scalar_one()
        problem = session.get(Problem, minerva.problem_id)
        assert minerva.ground_truth == "['50\\n']" and isinstance(problem.ground_truth, list)
        assert minerva.question != problem.question


def test_reimport_is_a_no_op(engine: Engine, shared_data: Path) -> None:
    import_release(engine, shared_data / "reliablemath")
    with read_session(engine) as session:
        before = compute(session)
    summary = import_parts(read(shared_data / "reliablemath"), engine=engine)
    assert (summary.problems_added, summary.candidates_added, summary.labels_added) == (0, 0, 0)
    assert summary.problems_updated == summary.candidates_updated == summary.labels_updated == 0
    with read_session(engine) as session:
        assert compute(session) == before


def test_the_release_summary_counts_each_record_once(engine: Engine, shared_data: Path) -> None:
    """solve.json and unsol.json repeat the per-source files: neither the first import nor a second one counts
    their records again (as added, nor as unchanged)."""
    first = import_parts(read(shared_data / "reliablemath"), engine=engine)
    assert (first.problems_added, first.candidates_added, first.labels_added, first.unchanged) == (313, 1102, 1102, 0)
    again = import_parts(read(shared_data / "reliablemath"), engine=engine)
    assert (again.problems_added, again.candidates_added, again.labels_added, again.unchanged) == (0, 0, 0, 313 + 1102)
    assert again.files[-1].endswith("math_instruction.json") and len(again.files) == 11


def test_a_data_source_that_is_no_name_is_refused_naming_its_record(engine: Engine, tmp_path: Path) -> None:
    records = [{"data_source": "aime", "id": 0, "question": "Q", "ground_truth": "1"},
               {"data_source": "ai\x00me\u202e", "id": 1, "question": "Q", "ground_truth": "2"}]
    path = tmp_path / "solve.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_parts(read(path), engine=engine)
    assert str(caught.value) == (f"{path}: record 2: field 'data_source': 'ai\\x00me\\u202e' holds U+0000 (a control "
                                 "character) at character 3: names may not hold control, format or bidirectional "
                                 "characters")
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Problem)).scalar_one() == 0
