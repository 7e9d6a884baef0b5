"""Bad input: each case exits non-zero with one message naming the file, the record and the field, and
leaves the database exactly as it was (the whole import is one transaction). Then sheets on both backends: rows
land on their problems and candidates, and on PostgreSQL the records stream through the import."""

from __future__ import annotations

import json
import sqlite3
import weakref
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.accounts import auth
from annotator.database.engine import read_session, write_session
from annotator.database.models import Annotation, AnnotationEvent, Annotator, Candidate, Problem
from annotator.import_export import importer
from annotator.import_export.formats import ReadOptions, read_all
from annotator.import_export.records import InputError
from annotator.labelling import adjudication, labels
from tests.support.cli import run_cli
from tests.support.small_release import SOLVE, UNSOL


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[str, Path]:
    """A database that already holds a small release, so 'unchanged' is not trivially 'empty'."""
    db = tmp_path / "loaded.sqlite"
    url = f"sqlite:///{db}"
    release = tmp_path / "release"
    (release / "solve").mkdir(parents=True)
    write_json(release / "solve.json", SOLVE)
    write_json(release / "unsol.json", UNSOL)
    result = run_cli(url, "import", str(release))
    assert result.returncode == 0, result.stderr
    return url, db


def unsol_with(**changes: object) -> list[dict[str, object]]:
    rows = [dict(row) for row in UNSOL]
    rows.append({**UNSOL[0], "data_id": "aime_0_contradict_1", **changes})
    return rows


def sheet_row(**changes: object) -> dict[str, object]:
    row = {
        "unsol_id": "amc_0_remove_1",
        "data_source": "amc",
        "question": SOLVE[2]["question"],
        "ground_truth": 12.0,
        "rewritten_condition": "the factor 4",
        "rewritten_question": "What is $3 \\cdot y$?",
        "unsolvable_reason": "y is unknown",
        "human_check": 1,
        "difficulty_eval": 0,
    }
    row.update(changes)
    return row


def _big_field_file(path: Path) -> Path:
    return write_json(path, unsol_with(rewritten_question="x" * 50_000_000))


BAD_INPUTS = {
    # name: (file name, writer, fragments the one error line must contain)
    "truncated json": ("unsol.json", lambda p: p.write_text(json.dumps(UNSOL)[:-40]), ["invalid JSON", "line 1"]),
    "invalid jsonl line": (
        "sheet.jsonl",
        lambda p: p.write_text(
            json.dumps(sheet_row()) + "\n" + json.dumps(sheet_row(unsol_id="amc_0_remove_2"))[:-5] + "\n"
        ),
        ["line 2", "invalid JSON"],
    ),
    "non-utf8 bytes": (
        "sheet.jsonl",
        lambda p: p.write_bytes(
            json.dumps(sheet_row()).encode() + b"\n" + json.dumps(sheet_row()).encode()[:30] + b"\xff\xfe}\n"
        ),
        ["line 2", "UTF-8"],
    ),
    "missing field": (
        "unsol.json",
        lambda p: write_json(p, [UNSOL[0], {k: v for k, v in UNSOL[1].items() if k != "rewritten_question"}]),
        ["record 2", "field 'rewritten_question'", "missing"],
    ),
    "difficulty_eval hard": (
        "unsol.json",
        lambda p: write_json(p, unsol_with(difficulty_eval="hard")),
        ["record 3", "field 'difficulty_eval'", "'hard'"],
    ),
    "human_check 2": (
        "sheet.json",
        lambda p: write_json(p, [sheet_row(human_check=2)]),
        ["record 1", "field 'human_check'", "2"],
    ),
    "data_id does not parse": (
        "unsol.json",
        lambda p: write_json(p, unsol_with(data_id="aime-zero-remove")),
        ["record 3", "field 'data_id'", "aime-zero-remove"],
    ),
    "data_id names a missing problem": (
        "unsol.json",
        lambda p: write_json(p, unsol_with(data_id="aime_9_remove_1")),
        ["record 3", "field 'data_id'", "aime_9_remove_1", "problem 9"],
    ),
    "duplicate ids in one file": (
        "unsol.json",
        lambda p: write_json(
            p, [*UNSOL, {**UNSOL[0], "data_id": "aime_0_remove_2"}, {**UNSOL[0], "data_id": "aime_0_remove_2"}]
        ),
        ["record 4", "field 'data_id'", "duplicate", "aime_0_remove_2", "record 3"],
    ),
    "empty file": ("unsol.json", lambda p: p.write_text(""), ["empty"]),
    "50 MB string field": (
        "unsol.json",
        _big_field_file,
        ["record 3", "field 'rewritten_question'", "50,000,000 characters"],
    ),
    "question is not text": (
        "unsol.json",
        lambda p: write_json(p, unsol_with(question=5)),
        ["record 3", "field 'question'", "expected text"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_rejected_and_changes_nothing(case: str, loaded: tuple[str, Path], tmp_path: Path) -> None:
    url, db = loaded
    name, write, fragments = BAD_INPUTS[case]
    path = tmp_path / name
    write(path)
    before = dump(db)
    result = run_cli(url, "import", str(path))
    assert result.returncode != 0
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert "Traceback" not in result.stderr
    assert dump(db) == before


def test_error_in_second_file_rolls_back_the_first(loaded: tuple[str, Path], tmp_path: Path) -> None:
    url, db = loaded
    good = write_json(tmp_path / "good.json", [sheet_row()])
    bad = write_json(tmp_path / "bad.json", [sheet_row(unsol_id="amc_0_remove_2", human_check="yes")])
    before = dump(db)
    result = run_cli(url, "import", str(good), str(bad))
    assert result.returncode != 0 and str(bad) in result.stderr and "field 'human_check'" in result.stderr
    assert dump(db) == before
    assert run_cli(url, "import", str(good)).returncode == 0
    assert dump(db) != before


def test_conflicting_record_names_both_and_update_replaces_it(loaded: tuple[str, Path], tmp_path: Path) -> None:
    url, db = loaded
    changed = [dict(row) for row in UNSOL]
    changed[1]["rewritten_question"] = "Find $y$ if $2y = 8$ and $y = 6$."
    path = write_json(tmp_path / "unsol.json", changed)
    before = dump(db)
    result = run_cli(url, "import", str(path))
    assert result.returncode != 0
    assert "aime_1_contradict_1" in result.stderr and "record 2" in result.stderr and "--update" in result.stderr
    assert "candidate id" in result.stderr
    assert dump(db) == before
    result = run_cli(url, "import", "--update", str(path))
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(db) as conn:
        (question,) = conn.execute(
            "SELECT rewritten_question FROM candidate WHERE data_id='aime_1_contradict_1'"
        ).fetchone()
    assert question.endswith("$y = 6$.")


def test_changed_label_is_a_conflict_and_update_records_an_event(loaded: tuple[str, Path], tmp_path: Path) -> None:
    url, db = loaded
    changed = [dict(row) for row in UNSOL]
    changed[0]["difficulty_eval"] = 1
    path = write_json(tmp_path / "unsol.json", changed)
    before = dump(db)
    result = run_cli(url, "import", str(path))
    assert result.returncode != 0 and "field 'human_check'" in result.stderr and "import:reliablemath" in result.stderr
    assert dump(db) == before
    assert run_cli(url, "import", "--update", str(path)).returncode == 0
    with sqlite3.connect(db) as conn:
        events = conn.execute(
            "SELECT e.action, e.old, e.new FROM annotationevent e JOIN candidate c ON c.id = e.candidate_id "
            "WHERE c.data_id = 'aime_0_remove_1' ORDER BY e.id"
        ).fetchall()
        resolved = conn.execute("SELECT difficulty_eval FROM candidate WHERE data_id = 'aime_0_remove_1'").fetchone()
    assert [e[0] for e in events] == ["create", "update"]
    assert json.loads(events[1][1])["difficulty_eval"] == 0 and json.loads(events[1][2])["difficulty_eval"] == 1
    assert resolved == (1,)


def test_a_corrected_comment_is_a_conflict_and_update_stores_it(loaded: tuple[str, Path], tmp_path: Path) -> None:
    """A comment is part of the label: a corrected one needs --update, which stores it as an "update" event (never
    dropped silently); a sheet without comments leaves the stored ones alone."""
    url, db = loaded
    first = write_json(tmp_path / "first.json", [sheet_row(comment="y is free")])
    assert run_cli(url, "import", "--annotator", "ann", str(first)).returncode == 0
    corrected = write_json(tmp_path / "corrected.json", [sheet_row(comment="y is never given")])
    before = dump(db)
    result = run_cli(url, "import", "--annotator", "ann", str(corrected))
    assert result.returncode != 0 and "field 'comment'" in result.stderr and "'y is free'" in result.stderr
    assert str(corrected) in result.stderr and "--update" in result.stderr
    assert dump(db) == before
    result = run_cli(url, "import", "--annotator", "ann", "--update", str(corrected))
    assert result.returncode == 0, result.stderr
    assert "0 labels added, 1 changed" in result.stdout
    bare = write_json(tmp_path / "bare.json", [sheet_row()])
    assert run_cli(url, "import", "--annotator", "ann", "--update", str(bare)).returncode == 0
    with sqlite3.connect(db) as conn:
        comment = conn.execute("SELECT a.comment FROM annotation a JOIN candidate c ON c.id = a.candidate_id "
                               "WHERE c.data_id = 'amc_0_remove_1'").fetchall()
        events = conn.execute("SELECT e.action, e.old, e.new FROM annotationevent e JOIN candidate c ON "
                              "c.id = e.candidate_id WHERE c.data_id = 'amc_0_remove_1' ORDER BY e.id").fetchall()
    assert comment == [("y is never given",)]
    assert [(action, old and json.loads(old)["comment"], json.loads(new)["comment"]) for action, old, new in events] \
        == [("create", None, "y is free"), ("update", "y is free", "y is never given")]


# -- sheets at scale, on both backends ----------------------------------------------------------------------------

SHEET_KINDS = [("remove", 1), ("remove", 2), ("contradict", 1)]


def _sheet(path: Path, count: int, *, seed: int) -> Path:
    """`count` sheet rows over two data sources, three candidates per problem, each labelled (by `seed`)."""
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            source, position = ("alpha", index // 3) if index % 2 else ("beta", index // 3 + 1000)
            rewrite_type, k = SHEET_KINDS[index % 3]
            accepted = (index * 7 + seed) % 5 != 0
            out.write(json.dumps({
                "data_id": f"{source}_{position}_{rewrite_type}_{k}", "data_source": source,
                "question": f"Problem {source} {position}", "ground_truth": str(position),
                "rewritten_question": f"Rewrite {index} of {source} {position}", "human_check": int(accepted),
                "difficulty_eval": (index + seed) % 2 if accepted else None,
            }) + "\n")
    return path


def _import(engine: Engine, *paths: Path, annotator: str) -> importer.ImportSummary:
    return importer.import_parts(read_all(list(paths), options=ReadOptions(annotator=annotator)), engine=engine)


def test_sheets_of_several_chunks_put_every_row_on_its_problem_candidate_and_label(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ids the INSERTs return are matched to their rows: every candidate on the problem its data_id names,
    every label on its candidate, over many chunks and two data sources, on SQLite and PostgreSQL."""
    monkeypatch.setattr(importer, "CHUNK_SIZE", 7)
    first, second = _sheet(tmp_path / "a1.jsonl", 60, seed=1), _sheet(tmp_path / "a2.jsonl", 60, seed=2)
    summary = _import(engine, first, annotator="a1")
    assert (summary.problems_added, summary.candidates_added, summary.labels_added) == (40, 60, 60)
    summary = _import(engine, second, annotator="a2")
    assert (summary.problems_added, summary.candidates_added, summary.labels_added, summary.unchanged) == \
        (0, 0, 60, 60)
    expected = {}
    for name, path in (("a1", first), ("a2", second)):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            expected[(row["data_id"], name)] = (row["rewritten_question"], row["human_check"], row["difficulty_eval"])
    with read_session(engine) as session:
        stored = session.execute(
            select(Candidate.data_id, Problem.data_source, Problem.position, Problem.question, Annotator.name,
                   Candidate.rewritten_question, Annotation.human_check, Annotation.difficulty_eval)
            .join(Problem, Problem.id == Candidate.problem_id)
            .join(Annotation, Annotation.candidate_id == Candidate.id)
            .join(Annotator, Annotator.id == Annotation.annotator_id)
        ).all()
        events = session.execute(select(func.count()).select_from(AnnotationEvent)).scalar()
    assert len(stored) == 120 and events == 120
    for data_id, source, position, question, name, rewritten, check, difficulty in stored:
        assert data_id.startswith(f"{source}_{position}_") and question == f"Problem {source} {position}"
        assert (rewritten, check, difficulty) == expected[(data_id, name)]


def test_a_bad_second_sheet_rolls_the_first_back_on_both_backends(engine: Engine, tmp_path: Path) -> None:
    good = _sheet(tmp_path / "good.jsonl", 20, seed=1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text().replace('"human_check": 1', '"human_check": "yes"', 1))
    with pytest.raises(InputError) as raised:
        _import(engine, good, bad, annotator="a1")
    assert str(bad) in str(raised.value) and "human_check" in str(raised.value)
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Candidate)).scalar() == 0
        assert session.execute(select(func.count()).select_from(Problem)).scalar() == 0


def test_on_postgresql_the_records_stream_through_the_import(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: a few chunks of records are alive at once however long the file (constant memory); SQLite
    reads every file before its write lock, so all are."""
    monkeypatch.setattr(importer, "CHUNK_SIZE", 10)
    alive = {"now": 0, "peak": 0}

    def gone() -> None:
        alive["now"] -= 1

    def counted(records):  # type: ignore[no-untyped-def]
        for record in records:
            weakref.finalize(record, gone)
            alive["now"] += 1
            alive["peak"] = max(alive["peak"], alive["now"])
            yield record

    parts = read_all([_sheet(tmp_path / "a1.jsonl", 300, seed=1)], options=ReadOptions(annotator="a1"))
    for part in parts:
        part.records = counted(part.records)
    assert importer.import_parts(parts, engine=engine).candidates_added == 300
    if engine.dialect.name == "sqlite":
        assert alive["peak"] == 300
    else:
        assert alive["peak"] <= 3 * importer.CHUNK_SIZE


def test_a_problem_stored_earlier_in_the_import_is_compared_with_what_was_stored(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Problems made from sheet rows are stored chunk by chunk and not kept in memory: a later record of the same
    problem is compared with the stored one (unchanged, or a conflict naming the field; --update replaces it)."""
    monkeypatch.setattr(importer, "CHUNK_SIZE", 5)
    sheet = _sheet(tmp_path / "a1.jsonl", 30, seed=1)
    same = tmp_path / "same.jsonl"
    # A flat table's first problem of a data source is its position 0.
    same.write_text(json.dumps({"data_source": "alpha", "question": "Problem alpha 0", "ground_truth": "0"}) + "\n")
    summary = _import(engine, sheet, same, annotator="a1")
    assert (summary.problems_added, summary.problems_updated) == (20, 0)  # the same problem: no conflict
    changed = tmp_path / "changed.jsonl"
    changed.write_text(same.read_text().replace('"ground_truth": "0"', '"ground_truth": "3"'))
    with pytest.raises(InputError) as raised:
        _import(engine, changed, annotator="a1")
    assert "ground_truth differ" in str(raised.value) and str(changed) in str(raised.value)
    replaced = importer.import_parts(read_all([changed], options=ReadOptions(annotator="a1")), engine=engine,
                                     update=True)
    assert replaced.problems_updated == 1
    with read_session(engine) as session:
        stored = session.execute(select(Problem.ground_truth).where(Problem.data_source == "alpha",
                                                                    Problem.position == 0)).scalar_one()
    assert stored == "3"


def test_a_re_import_is_unchanged_and_a_value_of_another_type_conflicts_on_both_backends(
    engine: Engine, tmp_path: Path
) -> None:
    """Stored candidates are compared all fields at once, then field by field when that finds a difference: the
    same sheet again changes nothing; a ground truth of another JSON type (12 for "12") or a changed text is a
    conflict naming the field, and --update replaces it."""
    rows = [sheet_row(unsol_id=f"amc_0_remove_{k}", ground_truth="12", human_check=None, difficulty_eval=None)
            for k in (1, 2)]
    first = write_json(tmp_path / "first.json", rows)
    assert _import(engine, first, annotator="a1").candidates_added == 2
    summary = _import(engine, write_json(tmp_path / "again.json", rows), annotator="a1")
    assert (summary.candidates_added, summary.candidates_updated, summary.unchanged) == (0, 0, 2)
    for field, value in (("ground_truth", 12), ("rewritten_question", "What is $4 \\cdot y$?")):
        changed = write_json(tmp_path / f"{field}.json", [rows[0], {**rows[1], field: value}])
        with pytest.raises(InputError) as conflict:
            _import(engine, changed, annotator="a1")
        assert conflict.value.record == "record 2" and conflict.value.field == field
    updated = importer.import_parts(read_all([changed], options=ReadOptions(annotator="a1")), engine=engine,
                                    update=True)
    assert updated.candidates_updated == 1


def test_a_sheets_labels_join_a_reviewers_decision_and_anothers_label_on_both_backends(
    engine: Engine, tmp_path: Path
) -> None:
    """The import reads with each candidate whether it holds any label or decision, and looks up the labels of only
    those that do. A candidate decided by a reviewer alone keeps the decision, one with bob's label gets a second,
    an untouched one takes the sheet's label as its own."""
    rows = [sheet_row(unsol_id=f"amc_0_remove_{k}", ground_truth="12", human_check=None, difficulty_eval=None)
            for k in (1, 2, 3)]
    _import(engine, write_json(tmp_path / "unlabelled.json", rows), annotator="a0")
    with write_session(engine) as session:
        ids = dict(session.execute(select(Candidate.data_id, Candidate.id)).all())
        reviewer, bob = (auth.system_annotator_id(session, name=name) for name in ("rita", "bob"))
        adjudication.adjudicate(session, candidate_id=ids["amc_0_remove_1"], reviewer_id=reviewer, human_check=1,
                                difficulty_eval=1)
        labels.record_labels(session, rows=[labels.LabelRow(ids["amc_0_remove_2"], bob, 1, 0)])
    sheet = [{**row, "human_check": 0, "difficulty_eval": None} for row in rows]
    assert _import(engine, write_json(tmp_path / "sheet.json", sheet), annotator="alice").labels_added == 3
    with read_session(engine) as session:
        stored = {data_id: rest for data_id, *rest in session.execute(
            select(Candidate.data_id, Candidate.label_count, Candidate.label_source, Candidate.human_check,
                   Candidate.difficulty_eval))}
    assert stored == {"amc_0_remove_1": [1, "adjudicated", 1, 1], "amc_0_remove_2": [2, None, None, None],
                      "amc_0_remove_3": [1, "single", 0, None]}
