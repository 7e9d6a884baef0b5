"""Excel batches: sheets handed out through claims, filled in with openpyxl as an
annotator would, imported back as that annotator's labels; `labels_per_candidate`, overlap and the browser
queue's claims respected on both backends."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from itertools import combinations
from pathlib import Path

import pytest
from openpyxl import load_workbook
from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Annotation, Annotator, Candidate, CandidateClaim, utcnow
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.labelling import batches, queue
from tests.support.candidates import add_candidates, add_user
from tests.support.labels import assert_agreement_recomputed

# What an annotator types: (human_check, difficulty_eval, comment), in the cell types Excel gives back.
FILLS = [(1, 0, None), (0, None, "two conditions changed"), ("1", 1.0, None), (None, None, None), (1.0, "0", "ok")]


def _make(engine: Engine, out: Path, **options: object) -> batches.Batches:
    return batches.create_batches(engine, out=out, **options)  # type: ignore[arg-type]


def _set_target(engine: Engine, value: int) -> None:
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=value)


def _claims(engine: Engine) -> list[tuple[int, str, str | None]]:
    with read_session(engine) as session:
        rows = session.execute(
            select(CandidateClaim.candidate_id, Annotator.name, CandidateClaim.batch).join(
                Annotator, Annotator.id == CandidateClaim.annotator_id
            )
        ).all()
    return sorted((row[0], row[1], row[2]) for row in rows)


def _fill(path: Path, fills: list[tuple[object, object, object]]) -> list[str]:
    """Type labels into the sheet's rows as an annotator would in Excel; returns the rows' data_ids."""
    workbook = load_workbook(path)
    sheet = workbook.active
    header = [cell.value for cell in sheet[1]]
    data_ids = [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)]
    for row, (check, difficulty, comment) in zip(range(2, 2 + len(fills)), fills):
        sheet.cell(row=row, column=header.index("human_check") + 1, value=check)
        sheet.cell(row=row, column=header.index("difficulty_eval") + 1, value=difficulty)
        sheet.cell(row=row, column=header.index("comment") + 1, value=comment)
    workbook.save(path)
    return data_ids


def _labels(engine: Engine) -> dict[tuple[str, str], tuple[int, int | None, str | None]]:
    with read_session(engine) as session:
        rows = session.execute(
            select(Candidate.data_id, Annotator.name, Annotation.human_check, Annotation.difficulty_eval,
                   Annotation.comment)
            .join(Candidate, Candidate.id == Annotation.candidate_id)
            .join(Annotator, Annotator.id == Annotation.annotator_id)
        ).all()
    return {(row[0], row[1]): (row[2], row[3], row[4]) for row in rows}


def test_round_trip_labels_in_the_database_equal_the_cells(engine: Engine, tmp_path: Path) -> None:
    add_candidates(engine, 12)
    for name in ("ann", "bob"):
        add_user(engine, name)
    made = _make(engine, tmp_path, annotators=["ann", "bob"], per_annotator=5)
    assert {name: len(ids) for name, ids in made.assigned.items()} == {"ann": 5, "bob": 5}

    ann_ids = _fill(tmp_path / "ann.xlsx", FILLS)
    bob_ids = _fill(tmp_path / "bob.xlsx", FILLS[:2])
    parts = [part for name in ("ann", "bob") for part in read(tmp_path / f"{name}.xlsx")]
    summary = import_parts(parts, engine=engine)

    expected = {}
    for name, ids, fills in (("ann", ann_ids, FILLS), ("bob", bob_ids, FILLS[:2])):
        for data_id, (check, difficulty, comment) in zip(ids, fills):
            if check is not None:
                expected[(data_id, name)] = (int(check), None if difficulty is None else int(difficulty), comment)
    assert _labels(engine) == expected
    # ann left one row empty and four more untouched; bob three.
    assert (summary.labels_added, summary.unlabelled) == (6, 1 + 3)
    # The labelled rows' claims are given up; the rest stay held for the sheets until the deadline.
    held = {(cid, name) for cid, name, batch in _claims(engine) if batch == made.name}
    with read_session(engine) as session:
        data_ids = dict(session.execute(select(Candidate.id, Candidate.data_id)).all())
    assert {(data_ids[cid], name) for cid, name in held} == {
        (data_id, name)
        for name, ids in (("ann", ann_ids), ("bob", bob_ids))
        for data_id in ids
        if (data_id, name) not in expected
    }
    # Importing the same sheets again changes nothing.
    again = import_parts([p for n in ("ann", "bob") for p in read(tmp_path / f"{n}.xlsx")], engine=engine)
    assert (again.labels_added, again.labels_updated) == (0, 0) and _labels(engine) == expected
    assert_agreement_recomputed(engine)  # the candidates' stored agreement follows a batch's return


def test_one_label_per_candidate_gives_disjoint_sheets_and_the_browser_queue_skips_them(engine: Engine,
                                                                                       tmp_path: Path) -> None:
    ids = add_candidates(engine, 10)
    ann, bob, cat = (add_user(engine, name) for name in ("ann", "bob", "cat"))
    # cat has the first candidate on screen in the browser: no sheet may have it.
    with write_session(engine) as session:
        assert queue.claim_next(session, annotator_id=cat.id) == ids[0]
    made = _make(engine, tmp_path, annotators=["ann", "bob"], per_annotator=4)
    assert made.assigned == {"ann": ids[1:9:2], "bob": ids[2:10:2]}
    # The sheets hold ids[1:9]; the browser queue hands out only what is left, to anyone.
    with write_session(engine) as session:
        assert queue.claim_next(session, annotator_id=ann.id) == ids[9]
        assert queue.claim_next(session, annotator_id=bob.id) is None
        # cat's browser claim is still hers after the batch (a batch touches no browser claim).
        assert queue.claim_next(session, annotator_id=cat.id) == ids[0]
    # Moving on in the browser or signing out keeps the sheets' claims.
    with write_session(engine) as session:
        queue.release(session, annotator_id=ann.id)
    assert sum(1 for _cid, _name, batch in _claims(engine) if batch == made.name) == 8
    # ann gave ids[9] up in the browser: it is all a second batch has left, and bob gets no sheet.
    again = _make(engine, tmp_path / "again", annotators=["ann", "bob"], per_annotator=4)
    assert again.assigned == {"ann": [ids[9]], "bob": []}
    assert (tmp_path / "again" / "ann.xlsx").exists() and not (tmp_path / "again" / "bob.xlsx").exists()


def test_overlap_each_candidate_to_k_annotators_every_pair_shares_some(engine: Engine, tmp_path: Path) -> None:
    """`--overlap 2` of three annotators: every candidate in exactly two sheets, the sheets balanced, each pair
    of annotators sharing candidates (pairwise agreement needs shared items)."""
    ids = add_candidates(engine, 9)
    for name in ("ann", "bob", "cat"):
        add_user(engine, name)
    with pytest.raises(batches.BatchError, match=r"--overlap 2 is more than labels_per_candidate \(1\)"):
        _make(engine, tmp_path, annotators=["ann", "bob", "cat"], overlap=2)
    _set_target(engine, 2)
    made = _make(engine, tmp_path, annotators=["ann", "bob", "cat"], overlap=2)
    per_candidate = Counter(cid for sheet in made.assigned.values() for cid in sheet)
    assert per_candidate == dict.fromkeys(ids, 2)
    assert sorted(len(sheet) for sheet in made.assigned.values()) == [6, 6, 6]
    for a, b in combinations(made.assigned.values(), 2):
        assert set(a) & set(b)
    # Each sheet on disk holds its annotator's candidates, in order, and names its annotator.
    with read_session(engine) as session:
        data_ids = dict(session.execute(select(Candidate.id, Candidate.data_id)).all())
    for name, sheet_ids in made.assigned.items():
        workbook = load_workbook(tmp_path / f"{name}.xlsx", read_only=True)
        rows = [row[0] for row in workbook.active.iter_rows(min_row=2, values_only=True)]
        assert rows == [data_ids[cid] for cid in sheet_ids]
        assert {p.name: p.value for p in workbook.custom_doc_props}["annotator"] == name
        workbook.close()
    # All candidates are fully handed out: the browser queue has nothing for a fourth annotator.
    dan = add_user(engine, "dan")
    with write_session(engine) as session:
        assert queue.claim_next(session, annotator_id=dan.id) is None


def test_labels_per_candidate_counts_labels_and_claims_already_there(engine: Engine, tmp_path: Path) -> None:
    ids = add_candidates(engine, 3)
    ann, bob, cat = (add_user(engine, name) for name in ("ann", "bob", "cat"))
    _set_target(engine, 2)
    with write_session(engine) as session:
        # ids[0]: labelled by ann and held by bob in the browser: complete once bob is done.
        queue.decide(session, annotator_id=ann.id, candidate_id=ids[0], human_check=1, difficulty_eval=0)
        queue.claim(session, annotator_id=bob.id, candidate_id=ids[0])
        # ids[1]: labelled by cat: one more annotator may have it, and not cat.
        queue.decide(session, annotator_id=cat.id, candidate_id=ids[1], human_check=0, difficulty_eval=None)
    made = _make(engine, tmp_path, annotators=["ann", "bob", "cat"], per_annotator=3)
    per_candidate = Counter(cid for sheet in made.assigned.values() for cid in sheet)
    assert per_candidate == {ids[1]: 1, ids[2]: 2}
    assert ids[1] not in made.assigned["cat"]


def test_expired_claims_are_void_and_the_deadline_is_days_away(engine: Engine, tmp_path: Path) -> None:
    ids = add_candidates(engine, 2)
    ann, _bob = add_user(engine, "ann"), add_user(engine, "bob")
    long_ago = utcnow() - timedelta(days=30)
    with write_session(engine) as session:
        # bob was handed both a month ago and never came back; ann had ids[0] on screen.
        first = batches.make_batches(session, annotators=["bob"], per_annotator=2, now=long_ago)
        queue.claim(session, annotator_id=ann.id, candidate_id=ids[0], now=long_ago)
    assert first.assigned == {"bob": ids}
    made = _make(engine, tmp_path, annotators=["ann", "bob"], per_annotator=1, days=3)
    assert made.assigned == {"ann": [ids[0]], "bob": [ids[1]]}
    with read_session(engine) as session:
        expiry = session.execute(select(CandidateClaim.expires_at).where(CandidateClaim.batch == made.name)).scalars()
        assert {abs(e - made.deadline) < timedelta(seconds=1) for e in expiry} == {True}
    assert timedelta(days=3) - timedelta(minutes=1) < made.deadline - utcnow() <= timedelta(days=3)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"annotators": ["ann"]}, "give --per-annotator N or --overlap K"),
        ({"annotators": ["ann", "ann"], "per_annotator": 1}, "named twice"),
        ({"annotators": ["ann", "zed"], "per_annotator": 1}, "'zed' has no account"),
        ({"annotators": ["import:x"], "per_annotator": 1}, "'import:x' has no account"),
        ({"annotators": ["ann"], "overlap": 2}, "--overlap must be between 1 and the number of annotators"),
        ({"annotators": ["ann"], "per_annotator": 0}, "--per-annotator must be at least 1"),
        ({"annotators": ["ann"], "per_annotator": 1, "days": 0}, "--days must be more than 0"),
    ],
)
def test_bad_requests_claim_nothing_and_write_nothing(
    sqlite_engine: Engine, tmp_path: Path, options: dict[str, object], message: str
) -> None:
    add_candidates(sqlite_engine, 2)
    add_user(sqlite_engine, "ann")
    with write_session(sqlite_engine) as session:
        from annotator.accounts import auth

        auth.system_annotator_id(session, name="import:x")
    with pytest.raises(batches.BatchError, match=message):
        _make(sqlite_engine, tmp_path / "out", **options)
    assert _claims(sqlite_engine) == [] and not (tmp_path / "out").exists()


def test_a_sheet_that_cannot_be_written_gives_its_claims_up(sqlite_engine: Engine, tmp_path: Path) -> None:
    add_candidates(sqlite_engine, 2)
    add_user(sqlite_engine, "ann")
    blocked = tmp_path / "out"
    blocked.write_text("a file where the directory should be")
    with pytest.raises(OSError):
        _make(sqlite_engine, blocked, annotators=["ann"], per_annotator=2)
    assert _claims(sqlite_engine) == []


def test_file_names_are_safe() -> None:
    assert batches.file_name("ann") == "ann.xlsx"
    assert batches.file_name("Dr. Ann Lee") == "Dr. Ann Lee.xlsx"
    assert batches.file_name("../etc/passwd") == "_etc_passwd.xlsx"


def test_imported_labels_fill_a_batchs_slots_or_not_as_the_project_says(engine: Engine, tmp_path: Path) -> None:
    """Candidates that came with the release's own label, labels_per_candidate = 2, three annotators: with imported
    labels counting each candidate goes to one sheet; not counting, to two."""
    import json

    release = tmp_path / "release"
    release.mkdir()
    solve = [{"data_source": "aime", "id": i, "question": f"Find $x$ if $x = {i}$.", "ground_truth": str(i)}
             for i in range(3)]
    unsol = [{"data_id": f"aime_{i}_remove_1", "question": row["question"], "rewritten_question": "Find $x$.",
              "ground_truth": row["ground_truth"], "difficulty_eval": 0} for i, row in enumerate(solve)]
    (release / "solve.json").write_text(json.dumps(solve), encoding="utf-8")
    (release / "unsol.json").write_text(json.dumps(unsol), encoding="utf-8")
    import_parts(read(release), engine=engine)
    for name in ("ann", "bob", "cat"):
        add_user(engine, name)
    _set_target(engine, 2)
    made = _make(engine, tmp_path / "counting", annotators=["ann", "bob", "cat"], per_annotator=3)
    assert sorted(Counter(cid for sheet in made.assigned.values() for cid in sheet).values()) == [1, 1, 1]
    with write_session(engine) as session:
        batches.release_batch(session, name=made.name)
        queue.set_imported_labels_count(session, value=False)
    made = _make(engine, tmp_path / "not_counting", annotators=["ann", "bob", "cat"], per_annotator=3)
    assert sorted(Counter(cid for sheet in made.assigned.values() for cid in sheet).values()) == [2, 2, 2]
