"""`queries.execute_many` and `execute_rows`: the bulk writes of a label import on the driver's executemany, or
PostgreSQL's COPY; `queries.label_state`: each
candidate in exactly one `LabelState`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, Text, bindparam, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from annotator.database import queries
from annotator.database.engine import read_session, write_session
from annotator.database.models import AnnotationEvent, Candidate, utcnow
from annotator.database.vocabulary import LabelState
from annotator.labelling.queue import label_target
from tests.support.candidates import add_candidates, add_user
from tests.support.progress import one_in_each_state

RAW_EVENTS = text('SELECT candidate_id, annotator_id, action, old, new, "at" FROM annotationevent ORDER BY id')


def _events(candidate_ids: list[int], annotator_id: int, *, note: str) -> list[dict[str, object]]:
    now = utcnow()  # one object for the whole chunk, as an import passes it
    return [
        {"candidate_id": candidate_id, "annotator_id": annotator_id, "at": now, "action": "create", "old": None,
         "new": {"human_check": 1, "difficulty_eval": i % 2, "comment": f"{note} é {i}", "x": 1.0}}
        for i, candidate_id in enumerate(candidate_ids)
    ]


def test_rows_are_stored_exactly_as_sqlalchemy_stores_them(engine: Engine) -> None:
    """Same stored text for timestamps and JSON as SQLAlchemy's own executemany, on each backend."""
    candidate_ids = add_candidates(engine, 3)
    annotator_id = add_user(engine, "ann").id
    ours, theirs = _events(candidate_ids, annotator_id, note="ours"), _events(candidate_ids, annotator_id, note="ours")
    with write_session(engine) as session:
        session.connection().execute(insert(AnnotationEvent.__table__), theirs)
    with write_session(engine) as session:
        queries.execute_many(session, insert(AnnotationEvent.__table__), ours)
    with read_session(engine) as session:
        rows = [tuple(row) for row in session.execute(RAW_EVENTS)]
    by_sqlalchemy, by_ours = rows[:3], rows[3:]
    # The same text apart from the timestamp's value (utcnow() was called twice): compare its form.
    assert [row[:5] for row in by_ours] == [row[:5] for row in by_sqlalchemy]
    assert [len(str(row[5])) for row in by_ours] == [len(str(row[5])) for row in by_sqlalchemy]
    assert [type(row[5]) for row in by_ours] == [type(row[5]) for row in by_sqlalchemy]
    with read_session(engine) as session:
        stored = session.execute(select(AnnotationEvent.at, AnnotationEvent.new).order_by(AnnotationEvent.id)).all()
    assert [row.new for row in stored[3:]] == [row["new"] for row in ours]
    assert {row.at for row in stored[3:]} == {ours[0]["at"]}


def test_an_update_with_a_named_key_and_no_rows(engine: Engine) -> None:
    candidate_ids = add_candidates(engine, 4)
    table = Candidate.__table__
    statement = update(table).where(table.c.id == bindparam("b_id"))
    with write_session(engine) as session:
        queries.execute_many(session, statement, [])
        rows = [{"b_id": cid, "label_count": n} for n, cid in enumerate(candidate_ids)]
        queries.execute_many(session, statement, rows)
    with read_session(engine) as session:
        counts = dict(session.execute(select(Candidate.id, Candidate.label_count)).all())
    assert [counts[cid] for cid in candidate_ids] == [0, 1, 2, 3]


def test_a_driver_error_is_sqlalchemys_and_the_transaction_is_undone(engine: Engine) -> None:
    """A failed write raises SQLAlchemy's exception (which callers handle) and nothing of it stays."""
    candidate_ids = add_candidates(engine, 2)
    annotator_id = add_user(engine, "ann").id
    rows = _events([*candidate_ids, 10**9], annotator_id, note="bad")  # the last names no candidate
    with pytest.raises(IntegrityError), write_session(engine) as session:
        queries.execute_many(session, insert(AnnotationEvent.__table__), rows)
    with read_session(engine) as session:
        assert session.execute(RAW_EVENTS).all() == []


def test_each_candidate_is_in_exactly_one_label_state(engine: Engine) -> None:
    """One candidate in each state (a label of two: in progress; a tie: disputed; a tie decided: adjudicated;
    no label and filtered / unverified by status), and a labelled filtered one, which is in its labels' state."""
    states, _reviewer, _ann = one_in_each_state(engine)
    with read_session(engine) as session:
        state = queries.label_state(label_target(session))
        found = dict(session.execute(select(Candidate.id, state).order_by(Candidate.id)).all())
        counted = dict(session.execute(select(state, func.count()).group_by(state)).all())
    assert {found[candidate_id]: candidate_id for candidate_id in states.values()} == states
    assert counted == {**dict.fromkeys(LabelState, 1), LabelState.complete: 2}
    assert set(found.values()) <= set(LabelState) and len(found) == 8


def test_complete_follows_labels_per_candidate(engine: Engine) -> None:
    states, _reviewer, _ann = one_in_each_state(engine)
    with read_session(engine) as session:
        for target, in_progress_is in ((1, LabelState.complete), (3, LabelState.in_progress)):
            state = queries.label_state(queries.LabelTarget(target, count_imported=True))
            shown = session.execute(select(state).where(Candidate.id == states[LabelState.in_progress])).scalar()
            assert shown == in_progress_is
            # A reviewer's decision and a tie do not depend on how many labels are asked for.
            decided = session.execute(select(state).where(Candidate.id == states[LabelState.adjudicated])).scalar()
            assert decided == LabelState.adjudicated


EVENT_INSERT = insert(AnnotationEvent.__table__).values(old=bindparam("old_text", type_=Text()),
                                                        new=bindparam("new_text", type_=Text()))
EVENT_KEYS = ("candidate_id", "annotator_id", "action", "old_text", "new_text", "at")


def test_rows_as_tuples_store_what_mappings_store(engine: Engine) -> None:
    """`execute_rows` (by COPY on PostgreSQL, the table and a renamed column given) stores what `execute_many`
    stores from the same rows as mappings."""
    candidate_ids = add_candidates(engine, 3)
    annotator_id = add_user(engine, "ann").id
    now = utcnow()
    rows = [(cid, annotator_id, "create", None, f'{{"human_check": 1, "comment": "é {i}\\ttab"}}', now)
            for i, cid in enumerate(candidate_ids)]
    with write_session(engine) as session:
        queries.execute_many(session, EVENT_INSERT, [dict(zip(EVENT_KEYS, row, strict=True)) for row in rows])
        queries.execute_rows(session, EVENT_INSERT, EVENT_KEYS, rows, copy_into="annotationevent",
                             copy_columns={"old_text": "old", "new_text": "new"})
    with read_session(engine) as session:
        stored = [tuple(row) for row in session.execute(RAW_EVENTS)]
    assert len(stored) == 6 and stored[:3] == stored[3:]
    with read_session(engine) as session:
        news = session.execute(select(AnnotationEvent.new).order_by(AnnotationEvent.id)).scalars().all()
    assert news[3:] == [{"human_check": 1, "comment": f"é {i}\ttab"} for i in range(3)]


def test_a_bad_row_by_copy_is_sqlalchemys_error_and_stores_nothing(engine: Engine) -> None:
    candidate_ids = add_candidates(engine, 2)
    annotator_id = add_user(engine, "ann").id
    now = utcnow()
    rows = [(cid, annotator_id, "create", None, "{}", now) for cid in [*candidate_ids, 10**9]]  # no such candidate
    with pytest.raises(IntegrityError), write_session(engine) as session:
        queries.execute_rows(session, EVENT_INSERT, EVENT_KEYS, rows, copy_into="annotationevent",
                             copy_columns={"old_text": "old", "new_text": "new"})
    with read_session(engine) as session:
        assert session.execute(RAW_EVENTS).all() == []


def test_execute_rows_stores_each_rows_own_time_and_one_shared_time_alike(engine: Engine) -> None:
    """A column holding one object for every row is converted once; a column of different values (events'
    key times), each of its own."""
    candidate_ids = add_candidates(engine, 4)
    annotator_id = add_user(engine, "ann").id
    shared, start = utcnow(), datetime(2026, 1, 2, 3, 4, 5, 600_000, tzinfo=UTC)
    own = [start + timedelta(seconds=i) for i in range(4)]
    rows = [(cid, annotator_id, "create", None, '{"human_check": 0}', at)
            for cid, at in zip(candidate_ids, [shared] * 2 + own[2:], strict=True)]
    rows += [(cid, annotator_id, "create", None, '{"human_check": 0}', shared) for cid in candidate_ids]
    with write_session(engine) as session:
        queries.execute_rows(session, EVENT_INSERT, EVENT_KEYS, rows, copy_into="annotationevent",
                             copy_columns={"old_text": "old", "new_text": "new"})
    with read_session(engine) as session:
        times = session.execute(select(AnnotationEvent.at).order_by(AnnotationEvent.id)).scalars().all()
    assert times == [shared, shared, own[2], own[3], shared, shared, shared, shared]
