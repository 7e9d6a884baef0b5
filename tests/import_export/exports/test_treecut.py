"""The TreeCut export: the shared files, generated pairs and unusual serialisations written back byte for
byte."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, select

from annotator.construction import treecut
from annotator.database.engine import read_session
from annotator.database.models import Candidate, Problem, SourceFile
from annotator.import_export.exports import export
from annotator.import_export.formats import detect, read
from annotator.import_export.importer import import_parts
from tests.support.treecut_problems import ANSWERABLE, counts


def test_shared_files_round_trip_byte_for_byte(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "treecut"
    assert detect(source) == "treecut"
    summary = import_parts(read(source), engine=engine)
    assert (summary.problems_added, summary.candidates_added) == (3000, 1500)
    manifest = export("treecut", tmp_path / "out", engine=engine)
    files = sorted(source.glob("*.jsonl"))
    assert sorted(manifest["files"]) == [f.name for f in files]
    for path in files:
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes(), path.name
    # Re-importing changes nothing.
    again = import_parts(read(source), engine=engine)
    assert (again.problems_added, again.candidates_added, again.unchanged) == (0, 0, 4500)


def test_generated_pairs_import_as_problem_and_remove_candidate(engine: Engine, tmp_path: Path) -> None:
    params = treecut.Params(num_vars=8, ans_depth=6, cut_depth=3, order="backward")
    pairs = list(treecut.generate_pairs(params, count=12, seed=4))
    answerable, unanswerable = treecut.write_pairs(pairs, params, tmp_path / "gen", seed=4)
    # Importing only the unanswerable file brings its answerable counterparts along.
    import_parts(read(unanswerable), engine=engine)
    assert counts(engine) == (12, 12)
    with read_session(engine) as session:
        rows = session.execute(select(Candidate, Problem).join(Problem).order_by(Candidate.position)).all()
    for (candidate, problem), pair in zip(rows, pairs, strict=True):
        assert (
            problem.question == pair.problem and problem.ground_truth == pair.answer and problem.solution == pair.proof
        )
        assert candidate.rewritten_question == pair.cut_problem
        assert candidate.rewritten_condition == pair.cut_sentence
        assert candidate.condition_index == pair.cut_sentence_index + 1
        assert candidate.data_id.endswith(f"_remove_{pair.cut_sentence_index + 1}")
        assert all(name in candidate.unsolvable_reason for name in pair.undetermined)
        assert candidate.extra["checks"] == [
            {"name": "TreeCut exact check", "verdict": "unsolvable", "detail": pair.checks["unanswerable"].detail}
        ]
        assert problem.extra["checks"][0]["verdict"] == f"solvable: {pair.answer}"
        provenance = candidate.provenance
        assert (
            provenance["seed"] == 4 and provenance["params"]["numVars"] == 8 and provenance["params"]["cutDepth"] == 3
        )
        assert provenance["params"]["order"] == "backward"
    # Then the answerable file: nothing new, and both files export byte for byte.
    summary = import_parts(read(answerable), engine=engine)
    assert (summary.problems_added, summary.candidates_added) == (0, 0)
    export("treecut", tmp_path / "out", engine=engine)
    for path in (answerable, unanswerable):
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes()


def test_unusual_serialisation_still_round_trips(sqlite_engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "treecut" / ANSWERABLE
    lines = source.read_text(encoding="utf-8").splitlines()[:5]
    records = [json.loads(line) for line in lines]
    # Other key order, other spacing, non-ASCII kept unescaped, a blank line, no final newline.
    custom = [
        json.dumps({"answer": records[0]["answer"], "problem": records[0]["problem"], "proof": records[0]["proof"]}),
        json.dumps(records[1], indent=None, separators=(",", ":")),
        "",
        json.dumps(records[2] | {"proof": records[2]["proof"] + " ✓"}, ensure_ascii=False),
        lines[3],
        lines[4],
    ]
    target = tmp_path / "in" / ANSWERABLE.replace("REP-500", "REP-5")
    target.parent.mkdir()
    target.write_bytes("\n".join(custom).encode("utf-8"))
    import_parts(read(target), engine=sqlite_engine)
    export("treecut", tmp_path / "out", engine=sqlite_engine)
    assert (tmp_path / "out" / target.name).read_bytes() == target.read_bytes()
    with read_session(sqlite_engine) as session:
        assert session.execute(select(SourceFile.kind)).scalar_one() == "answerable"
