"""Team's counts as the database keeps them (`labelday`, its triggers on `annotation`): always the labels' own
counts per annotator and UTC day, whoever writes the labels and however, folded together or not."""

from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select, text

from annotator.database.engine import get_engine, insert_ignore, read_session, write_session
from annotator.database.models import Annotation, Annotator, LabelDay
from annotator.import_export.importer import import_parts
from annotator.import_export.records import CandidateRecord, ImportPart, LabelRecord, Location
from annotator.labelling import label_days, labels
from tests.support.labels import seed
from tests.support.postgres import create_database, drop_database
from tests.support.waiting import wait_for

# A label just before midnight UTC, one just after, and one a day later: three days.
DAYS = [datetime(2026, 1, 1, 23, 59, 59, 500_000, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC),
        datetime(2026, 1, 3, 12, tzinfo=UTC)]

Counts = dict[tuple[int, str], tuple[int, float]]


def counted_from_labels(engine: Engine) -> Counts:
    """Each (annotator, UTC day)'s labels and seconds, counted here from the labels themselves."""
    with read_session(engine) as session:
        rows = session.execute(select(Annotation.annotator_id, Annotation.created_at, Annotation.seconds_spent)).all()
    counts: dict[tuple[int, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for who, at, seconds in rows:
        count = counts[(who, at.astimezone(UTC).date().isoformat())]
        count[0] += 1
        count[1] += seconds or 0.0
    return {key: (int(n), seconds) for key, (n, seconds) in counts.items()}


def kept(engine: Engine) -> Counts:
    with read_session(engine) as session:
        return {(who, day): (n, seconds) for who, day, n, seconds in label_days.per_day(session)}


def assert_kept_right(engine: Engine) -> Counts:
    expected, found = counted_from_labels(engine), kept(engine)
    assert {key: n for key, (n, _) in found.items()} == {key: n for key, (n, _) in expected.items()}
    assert {key: s for key, (_, s) in found.items()} == pytest.approx({key: s for key, (_, s) in expected.items()})
    return found


def _sql_insert(engine: Engine, rows: list[tuple[int, int, datetime, float | None]]) -> None:
    with write_session(engine) as session:
        insert_ignore(session, Annotation.__table__, [
            {"candidate_id": c, "annotator_id": a, "human_check": 0, "difficulty_eval": None, "seconds_spent": s,
             "created_at": at, "updated_at": at} for c, a, at, s in rows])


def test_the_apps_label_writes_and_an_import_are_counted_as_team_showed_them(engine: Engine) -> None:
    """Keypresses, a label changed and given again (its seconds added), labels in bulk and an import's: the counts
    per annotator and day are the labels', and Team's activity is what a GROUP BY over the labels gives."""
    cids, (a0, a1, a2) = seed(engine, candidates=6)
    with write_session(engine) as session:
        for c in cids[:4]:
            labels.record_label(session, candidate_id=c, annotator_id=a0, human_check=1, difficulty_eval=0,
                                seconds_spent=2.5)
        labels.record_label(session, candidate_id=cids[0], annotator_id=a0, human_check=0, difficulty_eval=None,
                            seconds_spent=1.25)  # changed: its seconds added
        labels.record_label(session, candidate_id=cids[1], annotator_id=a0, human_check=1, difficulty_eval=0)
        labels.record_labels(session, rows=[labels.LabelRow(c, a1, 0, None, seconds_spent=3.0) for c in cids])
    with write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cids[2], a1, 0, None, seconds_spent=4.0)])
    records = [CandidateRecord(data_id=f"t_0_remove_{k}", data_source="t", problem_position=0, rewrite_type="remove",
                               condition_index=k, rewritten_question="What is $1+x$?", question="What is $1+1$?",
                               ground_truth="2", location=Location("sheet.json", f"record {k}"),
                               label=LabelRecord(1, 1, annotator="a2", account=True), label_only=True)
               for k in range(1, 4)]
    import_parts([ImportPart("sheet.json", records)], engine=engine, update=True)

    found = assert_kept_right(engine)
    today = datetime.now(UTC).date().isoformat()
    assert {who: n for (who, _), (n, _) in found.items()} == {a0: 4, a1: 6, a2: 3}
    assert found[(a1, today)][1] == pytest.approx(22.0) and found[(a0, today)][1] == pytest.approx(11.25)
    day = func.date(Annotation.created_at)  # Team's days as a GROUP BY over the labels gives them
    with read_session(engine) as session:
        grouped = session.execute(select(Annotator.name, day, func.count(), func.sum(Annotation.seconds_spent))
                                  .join(Annotator, Annotator.id == Annotation.annotator_id)
                                  .group_by(Annotator.name, day)).all()
        activity = labels.activity(session)
    per_day: dict[str, dict[str, int]] = defaultdict(dict)
    seconds: dict[str, float] = defaultdict(float)
    for name, date, n, spent in grouped:
        per_day[name][str(date)] = n
        seconds[name] += spent or 0.0
    assert {name: person["per_day"] for name, person in activity.items()} == per_day
    assert {name: person["seconds"] for name, person in activity.items()} == pytest.approx(seconds)


def test_labels_written_by_hand_are_counted_inserted_moved_and_deleted(engine: Engine) -> None:
    """SQL by hand, several rows a statement: seconds changed (to none too), labels moved to another day and
    another annotator, and deleted; a day whose labels are all gone is no longer counted; a change of comment
    alone adds no row."""
    cids, (a0, a1, _a2) = seed(engine, candidates=5)
    _sql_insert(engine, [(c, a0, DAYS[c % 2], 1.5) for c in cids] + [(cids[0], a1, DAYS[2], None)])
    assert_kept_right(engine)
    with write_session(engine) as session:
        rows = session.execute(select(func.count()).select_from(LabelDay)).scalar_one()
        session.execute(text("UPDATE annotation SET comment = 'x'"))
        assert session.execute(select(func.count()).select_from(LabelDay)).scalar_one() == rows
    statements = [
        ("UPDATE annotation SET seconds_spent = 7 WHERE annotator_id = :a0 AND candidate_id <= :c", {}),
        ("UPDATE annotation SET seconds_spent = NULL WHERE candidate_id = :c", {}),
        ("UPDATE annotation SET created_at = :day WHERE annotator_id = :a0", {"day": DAYS[2]}),
        ("UPDATE annotation SET annotator_id = :a1 WHERE annotator_id = :a0 AND candidate_id > :c", {}),
        ("DELETE FROM annotation WHERE annotator_id = :a1 AND candidate_id = :first", {}),
    ]
    for statement, values in statements:
        with write_session(engine) as session:
            session.execute(text(statement), {"a0": a0, "a1": a1, "c": cids[2], "first": cids[0], **values})
        assert_kept_right(engine)
    assert {day for _, day in kept(engine)} == {"2026-01-03"}
    with write_session(engine) as session:
        session.execute(text("DELETE FROM annotation"))
    assert kept(engine) == {}


def test_a_fold_keeps_the_counts_and_leaves_one_row_per_annotator_and_day(engine: Engine) -> None:
    """Many changes piled up (more than a read lets pass) are folded by the next read into one row per annotator
    and day; the counts are the same before and after, and after more labels."""
    cids, (a0, a1, _a2) = seed(engine, candidates=4)
    _sql_insert(engine, [(c, a, DAYS[c % 3], 2.0) for c in cids for a in (a0, a1)])
    with write_session(engine) as session:  # changes that cancel out, as many as a busy day's keypresses
        session.execute(LabelDay.__table__.insert(), [
            {"annotator_id": a0, "day": DAYS[0].date(), "labels": sign, "seconds": sign * 0.5}
            for _ in range(label_days.COMPACT_AFTER // 2 + 1) for sign in (1, -1)])
    before = assert_kept_right(engine)
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(LabelDay)).scalar_one() == len(before)
    _sql_insert(engine, [(cids[0], _a2, DAYS[1], 1.0)])
    assert label_days.compact(engine)
    assert_kept_right(engine)


@pytest.fixture
def pg_engine(postgres_url: str) -> Iterator[Engine]:
    """A fresh database on PostgreSQL alone (what SQLite, one writer at a time and no time zones, has not)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = get_engine(create_database(postgres_url, name))
    yield engine
    engine.dispose()
    drop_database(postgres_url, name)


@pytest.mark.postgres
def test_a_writers_time_zone_does_not_move_its_labels_day(pg_engine: Engine) -> None:
    """A day is the label's UTC day, whatever time zone the writing session has; TRUNCATE empties the counts."""
    engine = pg_engine
    cids, (a0, *_) = seed(engine, candidates=1)
    with write_session(engine) as session:
        session.execute(text("SET LOCAL TimeZone = 'Pacific/Kiritimati'"))  # UTC+14: noon UTC is its next day
        session.execute(text("INSERT INTO annotation (candidate_id, annotator_id, human_check, created_at, updated_at)"
                             " VALUES (:c, :a, 0, :at, :at)"), {"c": cids[0], "a": a0, "at": DAYS[2]})
        session.execute(text("TRUNCATE annotation, labelday"))  # TRUNCATE, with no DELETE trigger, empties it too
        session.execute(text("INSERT INTO annotation (candidate_id, annotator_id, human_check, created_at, updated_at)"
                             " VALUES (:c, :a, 0, :at, :at)"), {"c": cids[0], "a": a0, "at": DAYS[2]})
    assert kept(engine) == {(a0, "2026-01-03"): (1, 0.0)}


@pytest.mark.postgres
def test_labels_loaded_in_replica_mode_are_counted(pg_engine: Engine) -> None:
    """A bulk load that turns the foreign keys' triggers off with replica mode (bench/scale_data.py) is counted."""
    cids, (a0, *_) = seed(pg_engine, candidates=2)
    with write_session(pg_engine) as session:
        session.execute(text("SET LOCAL session_replication_role = replica"))
        session.execute(text("INSERT INTO annotation (candidate_id, annotator_id, human_check, seconds_spent, "
                             "created_at, updated_at) SELECT id, :a, 0, 1.5, :at, :at FROM candidate"),
                        {"a": a0, "at": DAYS[0]})
    assert assert_kept_right(pg_engine) == {(a0, "2026-01-01"): (2, 3.0)}


@pytest.mark.postgres
def test_writers_and_folds_at_once_never_wait_for_each_other_nor_miscount(pg_engine: Engine) -> None:
    """Two transactions labelling for the same annotator and day, and a fold between them, all open at once: none
    waits for another's lock (a second's lock timeout each), and the counts after are the labels'. Two folds at
    once: the second waits for the first and folds what is left."""
    engine = pg_engine
    cids, (a0, a1, _a2) = seed(engine, candidates=4)
    _sql_insert(engine, [(cids[0], a0, DAYS[0], 1.0)])
    first, second = engine.connect(), engine.connect()
    try:
        for conn, c in ((first, cids[1]), (second, cids[2])):
            conn.execute(text("SET lock_timeout = 1000"))
            conn.execute(text("INSERT INTO annotation (candidate_id, annotator_id, human_check, seconds_spent, "
                              "created_at, updated_at) VALUES (:c, :a, 0, 2, :at, :at)"), {"c": c, "a": a0,
                                                                                          "at": DAYS[0]})
        first.execute(text("UPDATE annotation SET seconds_spent = 5 WHERE candidate_id = :c"), {"c": cids[0]})
        with engine.connect() as folding:
            folding.execute(text("SET lock_timeout = 1000"))
            folding.execute(text(label_days._PG_FOLD), {"last": 10**9})  # noqa: SLF001  (the fold's own SQL)
            folding.commit()
        second.commit()
        first.commit()
    finally:
        first.close()
        second.close()
    assert assert_kept_right(engine)[(a0, "2026-01-01")] == (3, pytest.approx(9.0))

    _sql_insert(engine, [(c, a1, DAYS[1], 1.0) for c in cids])
    holder, second = engine.connect(), engine.connect()
    try:
        holder.execute(text(label_days._PG_FOLD), {"last": 10**9})  # noqa: SLF001
        assert not label_days.compact(engine)  # a fold under way: another gives up at once, changing nothing
        own = holder.execute(text("SELECT pg_backend_pid()")).scalar_one()
        waiting = threading.Thread(target=lambda: second.execute(text(label_days._PG_FOLD), {"last": 10**9}))  # noqa: SLF001
        waiting.start()
        with engine.connect() as conn:
            wait_for(lambda: conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY("
                                               "pg_blocking_pids(pid))"), {"pid": own}).scalar_one(),
                     10, "the second fold to wait for the first")
        holder.commit()
        waiting.join()
        second.commit()
    finally:
        holder.close()
        second.close()
    assert assert_kept_right(engine)[(a1, "2026-01-02")] == (4, pytest.approx(4.0))


OPERATION = st.one_of(
    st.tuples(st.just("insert"), st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2), st.integers(0, 2),
                                                    st.none() | st.floats(0, 100)), min_size=1, max_size=6)),
    st.tuples(st.just("label"), st.integers(0, 4), st.integers(0, 2), st.none() | st.floats(0, 100)),
    st.tuples(st.just("seconds"), st.integers(0, 4), st.none() | st.floats(0, 100)),
    st.tuples(st.just("day"), st.integers(0, 4), st.integers(0, 2)),
    st.tuples(st.just("annotator"), st.integers(0, 4), st.integers(0, 2)),
    st.tuples(st.just("delete"), st.integers(0, 4), st.none()),
    st.tuples(st.just("fold")),
)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(OPERATION, max_size=10))
def test_any_sequence_of_writes_and_folds_keeps_the_labels_counts(engine: Engine, operations: list) -> None:
    """Random writes (inserts of several rows, the app's keypresses, seconds, days and annotators changed,
    deletions) and folds, in any order: the counts are the labels' after every one."""
    with write_session(engine) as session:
        session.execute(text("DELETE FROM annotation"))
        session.execute(text("DELETE FROM labelday"))
        cids = list(session.execute(select(text("id")).select_from(text("candidate")).order_by(text("id"))).scalars())
        aids = list(session.execute(select(Annotator.id).order_by(Annotator.id)).scalars())
    if not cids:
        cids, aids = seed(engine, candidates=5)
    for operation in operations:
        _apply(engine, operation, cids, aids)
        assert_kept_right(engine)


# What a random write changes, by hand (`_apply`'s arguments: a candidate's index, then the value's).
_BY_HAND = {
    "seconds": ("UPDATE annotation SET seconds_spent = :value WHERE candidate_id <= :c", lambda v: v),
    "day": ("UPDATE annotation SET created_at = :value WHERE candidate_id >= :c", lambda v: DAYS[v]),
    # one label to another annotator, where that one has none on its candidate
    "annotator": ("UPDATE annotation SET annotator_id = :value WHERE candidate_id = :c AND NOT EXISTS (SELECT 1 "
                  "FROM annotation AS other WHERE other.candidate_id = :c AND other.annotator_id = :value) AND id = "
                  "(SELECT min(id) FROM annotation AS one WHERE one.candidate_id = :c)", None),
    "delete": ("DELETE FROM annotation WHERE candidate_id = :c", lambda v: None),
}


def _apply(engine: Engine, operation: tuple, cids: list[int], aids: list[int]) -> None:
    kind, *args = operation
    if kind == "fold":
        assert label_days.compact(engine)
    elif kind == "insert":
        _sql_insert(engine, [(cids[c], aids[a], DAYS[d], s) for c, a, d, s in args[0]])
    elif kind == "label":
        with write_session(engine) as session:
            labels.record_label(session, candidate_id=cids[args[0]], annotator_id=aids[args[1]], human_check=0,
                                difficulty_eval=None, seconds_spent=args[2])
    else:
        statement, value = _BY_HAND[kind]
        with write_session(engine) as session:
            session.execute(text(statement), {"c": cids[args[0]],
                                              "value": aids[args[1]] if value is None else value(args[-1])})
