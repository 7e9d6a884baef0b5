"""Recording labels: events, the resolved label on the candidate, and concurrent writers on SQLite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, insert, select, text
from sqlalchemy.exc import DBAPIError

from annotator import auth, labels
from annotator.db import get_engine, read_session, write_session
from annotator.models import Annotation, AnnotationEvent, Annotator, Candidate, Problem
from tests.conftest import PROJECT_ROOT


def seed(engine: Engine, candidates: int = 3, annotators: int = 3) -> tuple[list[int], list[int]]:
    with write_session(engine) as session:
        problem = Problem(data_source="t", position=0, question="What is $1+1$?", ground_truth="2")
        session.add(problem)
        session.flush()
        cids = []
        for k in range(candidates):
            candidate = Candidate(
                problem_id=problem.id,
                data_id=f"t_0_remove_{k + 1}",
                data_source="t",
                rewrite_type="remove",
                condition_index=k + 1,
                rewritten_question="What is $1+x$?",
                question=problem.question,
                ground_truth="2",
            )
            session.add(candidate)
            session.flush()
            cids.append(candidate.id)
        aids = []
        for i in range(annotators):
            annotator = Annotator(name=f"a{i}")
            session.add(annotator)
            session.flush()
            aids.append(annotator.id)
    return cids, aids


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], (None, None)),
        ([(1, 0)], (1, 0)),
        ([(0, None)], (0, None)),
        ([(1, 0), (0, None)], (None, None)),
        ([(1, 0), (1, 1), (0, None)], (1, 1)),
        ([(1, 0), (1, 0), (1, 1)], (1, 0)),
        ([(0, None), (0, None), (1, 1)], (0, None)),
    ],
)
def test_resolve(values: list[tuple[int, int | None]], expected: tuple[int | None, int | None]) -> None:
    assert labels.resolve(values) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], None),
        ([(1, 0)], "single"),
        ([(1, 0), (0, None)], None),  # a tie is unresolved
        ([(1, 1), (1, 1)], "unanimous"),
        ([(1, 0), (1, 1)], "majority"),  # both accept; difficulty by the tie rule
        ([(0, None), (0, None), (1, 1)], "majority"),
    ],
)
def test_label_source(values: list[tuple[int, int | None]], expected: str | None) -> None:
    assert labels.label_source(values, labels.resolve(values)) == expected


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
        "import sys, json; from tests.test_labels import _writer; "
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
            select(Candidate.id, Candidate.label_count, Candidate.human_check, Candidate.difficulty_eval)
            .order_by(Candidate.id)
        ).all()
        annotations = session.execute(
            select(Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check,
                   Annotation.difficulty_eval, Annotation.comment).order_by(Annotation.candidate_id,
                                                                           Annotation.annotator_id)
        ).all()
        events = session.execute(
            select(AnnotationEvent.candidate_id, AnnotationEvent.annotator_id, AnnotationEvent.action,
                   AnnotationEvent.old, AnnotationEvent.new).order_by(AnnotationEvent.candidate_id,
                                                                      AnnotationEvent.annotator_id,
                                                                      AnnotationEvent.id)
        ).all()
    return [tuple(r) for r in candidates], [tuple(r) for r in annotations], [tuple(r) for r in events]


def test_record_labels_in_bulk_ends_where_one_at_a_time_does(database_url: str, tmp_path: Path) -> None:
    """The set-based path (bulk label import) leaves labels, events and resolved labels exactly as recording the
    same labels one by one does, first labels and replacements alike."""
    import random

    from annotator.db import get_engine

    rng = random.Random(3)
    choices = [(0, None), (1, 0), (1, 1)]
    rounds = [
        # A comment stays with its candidate: an import does not count a change of comment alone as a new label.
        [(c, a, *rng.choice(choices), "note" if c % 2 else None) for c in range(12) for a in range(3)
         if rng.random() < 0.8]
        for _ in range(2)
    ]
    states = []
    for bulk in (False, True):
        url = database_url if bulk else f"sqlite:///{tmp_path / 'one_by_one.sqlite'}"
        engine = get_engine(url)
        cids, aids = seed(engine, candidates=12, annotators=3)
        for labels_of_round in rounds:
            rows = [labels.LabelRow(cids[c], aids[a], hc, de, comment) for c, a, hc, de, comment in labels_of_round]
            with write_session(engine) as session:
                if bulk:
                    labels.record_labels(session, rows=rows, replace=True)
                else:
                    for row in rows:
                        labels.record_label(session, candidate_id=row.candidate_id, annotator_id=row.annotator_id,
                                            human_check=row.human_check, difficulty_eval=row.difficulty_eval,
                                            comment=row.comment)
        states.append(_state(engine))
    one_by_one, bulk_state = states
    assert bulk_state == one_by_one
    assert any(event[2] == "update" for event in bulk_state[2])  # the second round did replace labels


def test_record_labels_refuses_a_changed_label_unless_replacing(engine: Engine) -> None:
    cids, aids = seed(engine)
    with write_session(engine) as session:
        assert labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 0)]) == (1, 0)
    with pytest.raises(labels.LabelConflict) as conflict, write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cids[1], aids[0], 0, None),
                                            labels.LabelRow(cids[0], aids[0], 1, 1)])
    assert (conflict.value.index, conflict.value.human_check, conflict.value.difficulty_eval) == (1, 1, 0)
    with read_session(engine) as session:  # the refused batch left nothing behind
        assert session.execute(select(func.count()).select_from(Annotation)).scalar() == 1
    with write_session(engine) as session:
        same = labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 0, "a comment")])
        replaced = labels.record_labels(session, rows=[labels.LabelRow(cids[0], aids[0], 1, 1)], replace=True)
    assert (same, replaced) == ((0, 0), (0, 1))
    with read_session(engine) as session:
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
