"""Recording labels: events, the resolved label on the candidate, and concurrent writers on SQLite."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, insert, select, text
from sqlalchemy.exc import DBAPIError

from annotator.accounts import auth
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotation, AnnotationEvent, Annotator, Candidate
from annotator.import_export.importer import import_parts
from annotator.import_export.records import CandidateRecord, ImportPart, LabelRecord, Location
from annotator.labelling import labels
from tests.conftest import PROJECT_ROOT
from tests.support.labels import assert_agreement_recomputed, seed

# labels on one candidate -> its resolved (human_check, difficulty_eval, label_source)
RESOLVED = [
    ([(1, 0)], (1, 0, "single")),
    ([(0, None)], (0, None, "single")),
    ([(1, 0), (0, None)], (None, None, None)),  # a tie on human_check is unresolved
    ([(1, 0), (1, 1), (0, None)], (1, 1, "majority")),  # a tie on difficulty among the accepting counts as hard
    ([(1, 0), (1, 0), (1, 1)], (1, 0, "majority")),
    ([(0, None), (0, None), (1, 1)], (0, None, "majority")),
    ([(1, 1), (1, 1)], (1, 1, "unanimous")),
    ([(1, 0), (1, 1)], (1, 1, "majority")),  # both accept; difficulty by the tie rule
    ([(1, 1), (0, None), (0, None)], (0, None, "majority")),
]


def test_the_resolved_label_and_its_source(engine: Engine) -> None:
    """Majority on human_check, ties unresolved; majority on difficulty among the accepting, ties hard; where
    the label comes from. All candidates in one `record_labels` call, so one set-based statement resolves them."""
    cids, aids = seed(engine, candidates=len(RESOLVED) + 1, annotators=3)
    rows = [labels.LabelRow(cids[c], aids[a], check, difficulty)
            for c, (values, _expected) in enumerate(RESOLVED) for a, (check, difficulty) in enumerate(values)]
    with write_session(engine) as session:
        assert labels.record_labels(session, rows=rows) == (len(rows), 0)
    with read_session(engine) as session:
        found = session.execute(select(Candidate.label_count, Candidate.human_check, Candidate.difficulty_eval,
                                       Candidate.label_source).order_by(Candidate.id)).all()
    assert [tuple(row) for row in found] == [(len(values), *expected) for values, expected in RESOLVED] + [
        (0, None, None, None)]  # the unlabelled candidate is left alone


@pytest.mark.parametrize(("human_check", "difficulty_eval"), [(2, None), (1, None), (0, 1), (1, 2)])
def test_invalid_labels_are_refused(engine: Engine, human_check: int, difficulty_eval: int | None) -> None:
    (cid, *_), (aid, *_) = seed(engine)
    with pytest.raises(labels.LabelError), write_session(engine) as session:
        labels.record_label(
            session, candidate_id=cid, annotator_id=aid, human_check=human_check, difficulty_eval=difficulty_eval
        )
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Annotation)).scalar() == 0


def test_changes_are_events_and_the_candidate_follows(engine: Engine) -> None:
    (cid, *_), (a0, a1, a2) = seed(engine)
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=cid, annotator_id=a0, human_check=1, difficulty_eval=0)
        labels.record_label(session, candidate_id=cid, annotator_id=a1, human_check=0, difficulty_eval=None)
    with read_session(engine) as session:
        candidate = session.get(Candidate, cid)
        assert (candidate.label_count, candidate.human_check) == (2, None)  # tied: disputed
    with write_session(engine) as session:
        labels.record_label(
            session, candidate_id=cid, annotator_id=a1, human_check=1, difficulty_eval=1, comment="on reflection"
        )
        labels.record_label(
            session, candidate_id=cid, annotator_id=a1, human_check=1, difficulty_eval=1, comment="on reflection"
        )
    with read_session(engine) as session:
        candidate = session.get(Candidate, cid)
        assert (candidate.label_count, candidate.human_check, candidate.difficulty_eval) == (2, 1, 1)
        events = session.execute(select(AnnotationEvent).order_by(AnnotationEvent.id)).scalars().all()
    assert [(e.annotator_id, e.action) for e in events] == [(a0, "create"), (a1, "create"), (a1, "update")]
    assert events[2].old == {"human_check": 0, "difficulty_eval": None, "comment": None}
    assert events[2].new == {"human_check": 1, "difficulty_eval": 1, "comment": "on reflection"}


def _writer(url: str, candidate_ids: list[int], annotator_id: int, first_round: int, rounds: int) -> None:
    engine = get_engine(url)
    # A start barrier: everything is imported and connected; wait for the parent's "go" so all writers
    # really race instead of running one after another as they happen to start.
    print("ready", flush=True)
    sys.stdin.readline()
    for r in range(first_round, first_round + rounds):
        for cid in candidate_ids:
            with write_session(engine) as session:
                labels.record_label(
                    session, candidate_id=cid, annotator_id=annotator_id, human_check=1, difficulty_eval=(r + cid) % 2
                )


def _race(url: str, candidate_ids: list[int], annotator_ids: list[int], *, first_round: int, rounds: int) -> None:
    code = (
        "import sys, json; from tests.labelling.test_labels import _writer; "
        "_writer(sys.argv[1], json.loads(sys.argv[2]), *map(int, sys.argv[3:]))"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, url, json.dumps(candidate_ids), str(aid), str(first_round), str(rounds)],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for aid in annotator_ids
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready", process.stderr
    for process in processes:  # release all writers before waiting for any
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [p.returncode for p in processes] == [0] * len(processes), [err for _out, err in outputs]


def test_concurrent_writers_lose_nothing(database_url: str) -> None:
    """Several processes labelling the same candidates at once, released together.

    SQLite: BEGIN IMMEDIATE serialises them instead of failing with "database is locked". PostgreSQL: the
    candidate row lock keeps every label in label_count (without it, concurrent first labels undercount).
    """
    engine = get_engine(database_url)
    cids, aids = seed(engine, candidates=40, annotators=4)
    _race(database_url, cids, aids, first_round=0, rounds=1)
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Annotation)).scalar() == 160
        assert session.execute(select(Candidate.label_count)).scalars().all() == [4] * 40
        assert session.execute(select(func.count()).select_from(AnnotationEvent)).scalar() == 160
    # Later rounds change every label (difficulty flips): 160 updates per round, counts stay right.
    _race(database_url, cids, aids, first_round=1, rounds=3)
    with read_session(engine) as session:
        assert session.execute(select(Candidate.label_count)).scalars().all() == [4] * 40
        assert session.execute(select(func.count()).select_from(AnnotationEvent)).scalar() == 160 * 4
        assert session.execute(select(func.count()).where(AnnotationEvent.action == "update")).scalar() == 160 * 3


def test_annotator_id_by_name_creates_system_annotators_once(engine: Engine) -> None:
    with write_session(engine) as session:
        first = auth.system_annotator_id(session, name="import:x.json")
        assert auth.system_annotator_id(session, name="import:x.json") == first
    with read_session(engine) as session:
        annotator = session.get(Annotator, first)
        assert annotator.is_system and annotator.password_hash is None
    with write_session(engine) as session:
        session.execute(
            insert(Annotator), [{"name": "bob", "role": "annotator", "is_system": False, "is_active": True}]
        )
    with write_session(engine) as session:
        bob = auth.system_annotator_id(session, name="bob")
    with read_session(engine) as session:
        assert not session.get(Annotator, bob).is_system


def test_the_event_table_is_append_only(engine: Engine) -> None:
    (cid, *_), (aid, *_) = seed(engine)
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=cid, annotator_id=aid, human_check=0, difficulty_eval=None)
    for statement in ("UPDATE annotationevent SET action = 'forged'", "DELETE FROM annotationevent"):
        with pytest.raises(DBAPIError, match="append-only"), write_session(engine) as session:
            session.execute(text(statement))
    with read_session(engine) as session:
        assert session.execute(select(AnnotationEvent.action)).scalars().all() == ["create"]


def _state(engine: Engine) -> tuple[list[tuple], list[tuple], list[tuple]]:
    with read_session(engine) as session:
        candidates = session.execute(
            select(Candidate.id, Candidate.label_count, Candidate.human_check, Candidate.difficulty_eval,
                   Candidate.label_source, Candidate.agreement).order_by(Candidate.id)
        ).all()
        annotations = session.execute(
            select(Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check,
                   Annotation.difficulty_eval, Annotation.comment, Annotation.seconds_spent)
            .order_by(Annotation.candidate_id, Annotation.annotator_id)
        ).all()
        events = session.execute(
            select(AnnotationEvent.candidate_id, AnnotationEvent.annotator_id, AnnotationEvent.action,
                   AnnotationEvent.old, AnnotationEvent.new).order_by(AnnotationEvent.candidate_id,
                                                                      AnnotationEvent.annotator_id,
                                                                      AnnotationEvent.id)
        ).all()
    return [tuple(r) for r in candidates], [tuple(r) for r in annotations], [tuple(r) for r in events]


Round = list[tuple[int, int, int, int | None, str | None, float | None]]  # candidate, annotator, label, comment, s


def _rounds(*, comments: list[str | None], seconds: bool) -> list[Round]:
    """Three rounds of labels on 12 candidates by 3 annotators: first labels, then changes of label, of comment
    alone, and labels given again unchanged."""
    rng = random.Random(3)
    choices = [(0, None), (1, 0), (1, 1)]
    return [
        [(c, a, *rng.choice(choices), rng.choice(comments), rng.choice([None, 2.5]) if seconds else None)
         for c in range(12) for a in range(3) if rng.random() < 0.8]
        for _ in range(3)
    ]


def _keypresses(engine: Engine, rounds: list[Round]) -> None:
    cids, aids = seed(engine, candidates=12, annotators=3)
    for labels_of_round in rounds:
        with write_session(engine) as session:
            for c, a, check, difficulty, comment, seconds in labels_of_round:
                labels.record_label(session, candidate_id=cids[c], annotator_id=aids[a], human_check=check,
                                    difficulty_eval=difficulty, comment=comment, seconds_spent=seconds)


def _in_bulk(engine: Engine, rounds: list[Round]) -> None:
    cids, aids = seed(engine, candidates=12, annotators=3)
    for labels_of_round in rounds:
        rows = [labels.LabelRow(cids[c], aids[a], check, difficulty, comment, seconds)
                for c, a, check, difficulty, comment, seconds in labels_of_round]
        with write_session(engine) as session:
            labels.record_labels(session, rows=rows, replace=True)


def _imported(engine: Engine, rounds: list[Round]) -> None:
    """The first round's labels of a0 come with their candidates (the import's fast path for new candidates), the
    rest as label-only rows of existing candidates (an Excel batch's), one file per annotator, with --update."""
    seed(engine, candidates=0, annotators=3)

    def candidate(c: int, label: tuple[int, int | None, str | None] | None, annotator: str) -> CandidateRecord:
        return CandidateRecord(
            data_id=f"t_0_remove_{c + 1}", data_source="t", problem_position=0, rewrite_type="remove",
            condition_index=c + 1, rewritten_question=None if annotator != "a0" else "What is $1+x$?",
            question="What is $1+1$?", ground_truth="2", location=Location(f"{annotator}.json", f"record {c + 1}"),
            label=None if label is None else LabelRecord(label[0], label[1], annotator=annotator, comment=label[2],
                                                         account=annotator != "a0"),
            label_only=annotator != "a0")

    for number, labels_of_round in enumerate(rounds):
        parts = []
        for a in range(3):
            given = {c: (check, difficulty, comment) for c, who, check, difficulty, comment, _s in labels_of_round
                     if who == a}
            if number == 0 and a == 0:  # every candidate, new, with a0's label where a0 gave one
                records = [candidate(c, given.get(c), "a0") for c in range(12)]
            else:
                records = [candidate(c, label, f"a{a}") for c, label in given.items()]
            parts.append(ImportPart(f"round{number}-a{a}.json", records))
        import_parts(parts, engine=engine, update=True)


@pytest.mark.parametrize("path", ["in bulk", "imported"])
def test_every_writer_ends_where_keypresses_do(path: str, database_url: str, tmp_path: Path) -> None:
    """`record_labels` with many rows, and an import (new candidates with labels, then label-only rows with
    --update), leave labels, time spent, events and resolved labels exactly as the same labels given one keypress
    at a time do: first labels, changed labels, comment-only changes, and the same label given again."""
    # An import names only the comments it has (none keeps the stored one), a keypress the whole label.
    rounds = _rounds(comments=[None, "note", "other"], seconds=True) if path == "in bulk" else \
        _rounds(comments=["note", "other"], seconds=False)
    keypresses = get_engine(f"sqlite:///{tmp_path / 'keypresses.sqlite'}")
    _keypresses(keypresses, rounds)
    engine = get_engine(database_url)
    (_in_bulk if path == "in bulk" else _imported)(engine, rounds)
    expected, found = _state(keypresses), _state(engine)
    assert found == expected
    assert any(value is not None and value < 1 for value in assert_agreement_recomputed(keypresses).values())
    updates = [(old, new) for _c, _a, action, old, new in found[2] if action == "update"]
    assert any(old["human_check"] != new["human_check"] for old, new in updates)
    assert any((old["human_check"], old["difficulty_eval"]) == (new["human_check"], new["difficulty_eval"])
               for old, new in updates)  # a change of comment alone
    if path == "in bulk":
        assert any(seconds == 5.0 for *_label, seconds in found[1])  # time spent adds up over rounds


def test_record_labels_refuses_a_changed_label_unless_replacing(engine: Engine) -> None:
    cids, aids = seed(engine)
    with write_session(engine) as session:
        assert labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 0, "a comment")]) == (1, 0)
    with pytest.raises(labels.LabelConflict) as conflict, write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cids[1], aids[0], 0, None),
                                            labels.LabelRow(cids[0], aids[0], 1, 1, "a comment")])
    assert (conflict.value.index, conflict.value.field, conflict.value.human_check,
            conflict.value.difficulty_eval) == (1, "human_check", 1, 0)
    with pytest.raises(labels.LabelConflict) as conflict, write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 0, "another comment")])
    assert (conflict.value.field, conflict.value.comment) == ("comment", "a comment")
    with read_session(engine) as session:  # the refused calls left nothing behind
        assert session.execute(select(func.count()).select_from(Annotation)).scalar() == 1
    with write_session(engine) as session:
        same = labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 0, "a comment")])
        kept = labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 0)], keep_comments=True)
        replaced = labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 1)], replace=True,
                                        keep_comments=True)
    assert (same, kept, replaced) == ((0, 0), (0, 0), (0, 1))
    with read_session(engine) as session:
        annotation = session.execute(select(Annotation)).scalar_one()
        assert (annotation.difficulty_eval, annotation.comment) == (1, "a comment")
        assert session.get(Candidate, cids[0]).difficulty_eval == 1
        assert session.execute(select(AnnotationEvent.action)).scalars().all() == ["create", "update"]


def test_activity_counts_people_per_day_on_both_backends(engine: Engine) -> None:
    cids, aids = seed(engine, candidates=3, annotators=2)
    with write_session(engine) as session:
        system = auth.system_annotator_id(session, name="import:x.json")
        for cid in cids:
            labels.record_label(session, candidate_id=cid, annotator_id=aids[0], human_check=1, difficulty_eval=0,
                                seconds_spent=20.0)
            labels.record_label(session, candidate_id=cid, annotator_id=system, human_check=0, difficulty_eval=None)
        labels.record_label(session, candidate_id=cids[0], annotator_id=aids[1], human_check=0, difficulty_eval=None)
    with read_session(engine) as session:
        activity = labels.activity(session)
        [today] = {str(d) for d in session.execute(select(func.date(Annotation.created_at))).scalars()}
    assert set(activity) == {"a0", "a1"}  # the import's pseudo-annotator is not a person
    assert activity["a0"] == {"labels": 3, "seconds": 60.0, "per_hour": 180.0, "per_day": {today: 3}}
    assert activity["a1"]["per_hour"] is None and activity["a1"]["per_day"] == {today: 1}


def test_recording_labels_chunk_after_chunk_adds_no_compiled_statements(engine: Engine) -> None:
    """An import records its labels a chunk at a time; each chunk's statements must be the same SQL text, or
    SQLAlchemy caches a new compiled statement per chunk and a long import's memory grows with its size instead of
    staying constant. The ids are bound values, so after the first chunk the
    cache stays as it is, whatever the ids."""
    cids, aids = seed(engine, candidates=6, annotators=2)
    cache = engine._compiled_cache
    assert cache is not None

    def record(candidate_ids: list[int], annotator_id: int) -> None:
        with write_session(engine) as session:
            rows = [labels.LabelRow(cid, annotator_id, 1, cid % 2) for cid in candidate_ids]
            labels.record_labels(session, rows=rows)

    record(cids[:2], aids[0])
    record(cids[:1], aids[1])  # a second label: resolved from the labels (the first were a candidate's only one)
    size = len(cache)
    record(cids[2:4], aids[0])
    record(cids[4:], aids[1])
    record(cids[1:3], aids[1])
    assert len(cache) == size
    with read_session(engine) as session:  # and the labels went where their ids said
        stored = sorted(session.execute(select(Annotation.candidate_id, Annotation.annotator_id)).all())
        assert stored == sorted([(cid, aids[0]) for cid in cids[:4]] + [(cid, aids[1]) for cid in cids[4:] + cids[:3]])
        counts = dict(session.execute(select(Candidate.id, Candidate.label_count)).all())
        assert counts == {cid: 2 if cid in cids[:3] else 1 for cid in cids}


def test_new_labels_recorded_together_are_stored_as_one_at_a_time(engine: Engine) -> None:
    """Labels none of which is stored yet are planned all at once: each label with its comment and time spent, its
    "create" event with its key time and decision id, and the resolved labels come out as when each is recorded
    alone."""
    cids, aids = seed(engine, candidates=4)
    pressed = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)

    def rows(first: int, second: int) -> list[labels.LabelRow]:
        return [labels.LabelRow(first, aids[0], 1, 0, "a comment", 4.5, decision_id=f"d-{first}", pressed_at=pressed),
                labels.LabelRow(second, aids[0], 0, None),
                labels.LabelRow(first, aids[1], 1, 1, seconds_spent=2.0)]

    with write_session(engine) as session:
        assert labels.record_labels(session, rows=rows(cids[0], cids[1])) == (3, 0)
    for row in rows(cids[2], cids[3]):
        with write_session(engine) as session:
            assert labels.record_labels(session, rows=[row]) == (1, 0)
    place = {cids[0]: "first", cids[1]: "second", cids[2]: "first", cids[3]: "second"}
    with read_session(engine) as session:
        kept = [(place[row[0]], *row[1:]) for row in session.execute(
            select(Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check,
                   Annotation.difficulty_eval, Annotation.comment, Annotation.seconds_spent).order_by(Annotation.id))]
        events = [(place[row[0]], *row[1:]) for row in session.execute(
            select(AnnotationEvent.candidate_id, AnnotationEvent.annotator_id, AnnotationEvent.action,
                   AnnotationEvent.old, AnnotationEvent.new).order_by(AnnotationEvent.id))]
        keys = session.execute(select(AnnotationEvent.at, AnnotationEvent.decision_id)
                               .order_by(AnnotationEvent.id)).all()
        resolved = [(place[row[0]], *row[1:]) for row in session.execute(
            select(Candidate.id, Candidate.label_count, Candidate.human_check, Candidate.difficulty_eval,
                   Candidate.label_source, Candidate.agreement).order_by(Candidate.id))]
    assert kept[:3] == kept[3:] and kept[0] == ("first", aids[0], 1, 0, "a comment", 4.5)
    assert events[:3] == events[3:] and events[0][3:] == (None, {"human_check": 1, "difficulty_eval": 0,
                                                                 "comment": "a comment"})
    assert (keys[0][0], keys[0][1], keys[3][0], keys[3][1]) == (pressed, f"d-{cids[0]}", pressed, f"d-{cids[2]}")
    assert [key[1] for key in keys] == [f"d-{cids[0]}", None, None, f"d-{cids[2]}", None, None]
    assert resolved[:2] == resolved[2:] == [("first", 2, 1, 1, "majority", 0.5), ("second", 1, 0, None, "single", 1.0)]


def _resolved(engine: Engine) -> list[tuple]:
    with read_session(engine) as session:
        return [tuple(row) for row in session.execute(
            select(Candidate.id, Candidate.label_count, Candidate.imported_label_count, Candidate.human_check,
                   Candidate.difficulty_eval, Candidate.label_source, Candidate.agreement).order_by(Candidate.id))]


def test_plain_new_labels_are_stored_and_resolved_as_the_rules_say(engine: Engine) -> None:
    """New labels without comment or time (an import's), written from one JSON text (on SQLite the events, and the
    resolved labels, from the labels just inserted) and resolved at once where the label is its candidate's only
    one: the labels, their "create" events (the label's JSON as any event writes it) and the resolved labels are
    those the rule statement gives. Not alone: a candidate labelled by someone else before, one decided by a
    reviewer, one given two labels in the same call. Then a call whose labels are all alone leaves the others be."""
    cids, aids = seed(engine, candidates=9, annotators=3)
    with write_session(engine) as session:
        system = auth.system_annotator_id(session, name="import:sheet.json")
        # By a2, who labels nothing below: what is stored for the rows' annotators, nothing.
        labels.record_labels(session, rows=[labels.LabelRow(cids[4], aids[2], 1, 1)])
        labels.record_labels(session, rows=[labels.LabelRow(cids[5], aids[2], 1, 1, decision=True)])
        # A label with its time spent is not plain: its event's JSON is the reference for the plain ones'.
        labels.record_labels(session, rows=[labels.LabelRow(cids[6], aids[2], 1, 0, seconds_spent=3.0)])
    rows = [labels.LabelRow(cids[0], system, 1, 1), labels.LabelRow(cids[1], aids[0], 0, None),
            labels.LabelRow(cids[2], aids[0], 1, 1), labels.LabelRow(cids[2], aids[1], 1, 0),
            labels.LabelRow(cids[3], aids[0], 1, 0), labels.LabelRow(cids[4], aids[0], 0, None),
            labels.LabelRow(cids[5], aids[0], 0, None), labels.LabelRow(cids[6], aids[0], 1, 0)]
    alone = [labels.LabelRow(cids[7], aids[0], 1, 1), labels.LabelRow(cids[8], system, 0, None)]
    expected = [
        (cids[0], 1, 1, 1, 1, "single", 1.0), (cids[1], 1, 0, 0, None, "single", 1.0),
        (cids[2], 2, 0, 1, 1, "majority", 0.5), (cids[3], 1, 0, 1, 0, "single", 1.0),
        (cids[4], 2, 0, None, None, None, 0.5), (cids[5], 1, 0, 1, 1, "adjudicated", 1.0),
        (cids[6], 2, 0, 1, 0, "unanimous", 1.0)]
    with write_session(engine) as session:
        assert labels.record_labels(session, rows=rows) == (len(rows), 0)
    assert _resolved(engine) == [*expected, (cids[7], 0, 0, None, None, None, None),
                                 (cids[8], 0, 0, None, None, None, None)]
    with write_session(engine) as session:
        assert labels.record_labels(session, rows=alone) == (2, 0)
    expected += [(cids[7], 1, 0, 1, 1, "single", 1.0), (cids[8], 1, 1, 0, None, "single", 1.0)]
    assert _resolved(engine) == expected
    with read_session(engine) as session:
        stored = session.execute(select(Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check,
                                        Annotation.difficulty_eval, Annotation.comment, Annotation.seconds_spent,
                                        Annotation.created_at, Annotation.updated_at).order_by(Annotation.id)).all()
        events = session.execute(text("SELECT candidate_id, annotator_id, action, old, new, at, decision_id "
                                      "FROM annotationevent ORDER BY id")).all()
        times = session.execute(select(AnnotationEvent.at).order_by(AnnotationEvent.id)).scalars().all()
    new_labels, new_events = stored[2:], events[3:]  # in the order of the rows (a decision is no label)
    assert [tuple(label[:6]) for label in new_labels] == [(*row[:4], None, None) for row in rows + alone]
    assert len({label[6] for label in new_labels[:-2]} | {label[7] for label in new_labels[:-2]}) == 1
    reference = events[2][4]  # (1, 0) with no comment, written a row at a time
    assert [event[4] for event in new_events if (event[0], event[1]) == (cids[6], aids[0])] == [reference]
    assert [(event[0], event[1], event[2], event[3], json.loads(event[4]), event[6]) for event in new_events] == [
        (row[0], row[1], "create", None, {"human_check": row[2], "difficulty_eval": row[3], "comment": None}, None)
        for row in rows + alone]
    assert times[3:] == [label[6] for label in new_labels]  # each event at its label's time
    # The rule statement, run again on every candidate, changes nothing.
    with write_session(engine) as session:
        from annotator.labelling._label_writer import _resolved_labels

        session.execute(_resolved_labels(cids, now=datetime.now(UTC), unlabelled=True,
                                         dialect=session.connection().dialect.name))
    assert _resolved(engine) == expected
