"""TreeCut JSONL in and out: the shared files byte for byte, generated pairs as problem + candidate, every
record checked, disagreements and malformed sentences reported by line with nothing imported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.construction import treecut
from annotator.database.engine import read_session
from annotator.database.models import Candidate, Problem
from annotator.import_export.formats import InputError, read
from annotator.import_export.importer import import_parts
from tests.support.treecut_problems import ANSWERABLE, counts


def test_shared_unanswerable_records_carry_the_exact_verdict(sqlite_engine: Engine, shared_data: Path) -> None:
    name = ANSWERABLE.replace("hallu-False", "hallu-True_cutDepth-1")
    import_parts(read(shared_data / "treecut" / name), engine=sqlite_engine)
    with read_session(sqlite_engine) as session:
        candidates = list(session.execute(select(Candidate)).scalars())
        problems = {p.id: p for p in session.execute(select(Problem)).scalars()}
    assert len(candidates) == 500
    for candidate in candidates:
        check = candidate.extra["checks"][0]
        assert check["name"] == "TreeCut exact check" and check["verdict"] == "unsolvable"
        assert candidate.rewrite_type == "remove" and candidate.unsolvable_reason
        # No answerable original exists for these samples: the problem holds the same text, no ground truth.
        problem = problems[candidate.problem_id]
        assert problem.question == candidate.rewritten_question and problem.ground_truth is None
        assert problem.extra["treecut"]["answerable"] is False


def _copy_with(tmp_path: Path, source: Path, edits: dict[int, dict]) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    for number, changes in edits.items():
        record = json.loads(lines[number - 1])
        record.update(changes)
        lines[number - 1] = json.dumps(record) + "\n"
    target = tmp_path / source.name
    target.write_text("".join(lines), encoding="utf-8")
    return target


def test_disagreeing_answers_are_reported_by_line_and_nothing_is_imported(
    sqlite_engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    source = shared_data / "treecut" / ANSWERABLE
    first = json.loads(source.read_text().splitlines()[2])
    wrong = str(int(first["answer"]) + 1)
    bad = _copy_with(tmp_path, source, {3: {"answer": wrong}, 41: {"answer": "4"}, 170: {"answer": "unknown"}})
    with pytest.raises(InputError) as error:
        import_parts(read(bad), engine=sqlite_engine)
    message = str(error.value)
    # line 170 says "unknown" in a file of answerable problems: reported first, on its own
    assert "line 170" in message and "answer" in message
    bad = _copy_with(tmp_path, source, {3: {"answer": wrong}, 41: {"answer": "4"}})
    with pytest.raises(InputError) as error:
        import_parts(read(bad), engine=sqlite_engine)
    message = str(error.value)
    assert "2 records disagree with the exact check" in message
    assert f"line 3: states '{wrong}', the exact check says solvable: {first['answer']}" in message
    assert "line 41: states '4'" in message
    assert counts(sqlite_engine) == (0, 0)


def test_a_malformed_sentence_names_file_line_and_field(
    sqlite_engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    source = shared_data / "treecut" / ANSWERABLE
    record = json.loads(source.read_text().splitlines()[6])
    broken = record["problem"].replace(" cost ", " cots ", 1).replace(" costs ", " cots ", 1)
    bad = _copy_with(tmp_path, source, {7: {"problem": broken}})
    with pytest.raises(InputError) as error:
        read(bad)
    assert error.value.record == "line 7" and error.value.field == "problem" and error.value.path == str(bad)
    assert "does not match any TreeCut template" in str(error.value)
    unknown = _copy_with(
        tmp_path, source, {9: {"problem": "A taco at Texas BBQ costs 5 dollars. " + record["problem"]}}
    )
    with pytest.raises(
        InputError, match="line 9: field 'problem': not a TreeCut problem: unknown item name 'taco at Texas BBQ'"
    ):
        read(unknown)
    missing = _copy_with(tmp_path, source, {2: {"proof": None}})
    with pytest.raises(InputError, match="line 2: field 'proof'"):
        read(missing)
    assert counts(sqlite_engine) == (0, 0)


def test_a_directory_of_generated_files_imports_answerable_first(sqlite_engine: Engine, tmp_path: Path) -> None:
    params = treecut.Params(num_vars=4, ans_depth=2, cut_depth=1)
    pairs = list(treecut.generate_pairs(params, count=3, seed=1))
    treecut.write_pairs(pairs, params, tmp_path / "gen")
    shutil.copy(tmp_path / "gen" / params.file_name(unanswerable=False, count=3), tmp_path / "gen" / "notes.txt")
    parts = read(tmp_path / "gen")
    assert [Path(p.path).name for p in parts] == [
        params.file_name(unanswerable=False, count=3),
        params.file_name(unanswerable=True, count=3),
    ]
    import_parts(parts, engine=sqlite_engine)
    assert counts(sqlite_engine) == (3, 3)
