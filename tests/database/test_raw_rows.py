"""`annotator.database.raw_rows`: a select's rows straight from the driver, through an ORM session or a Core
connection alike, on each backend; columns of numbers as arrays (`read_arrays`: PostgreSQL's through a binary
COPY)."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import Engine, func, literal, select

from annotator.database.engine import read_connection, read_session, write_session
from annotator.database.models import Annotation, Candidate
from annotator.database.raw_rows import iter_raw, iter_raw_tuples, read_arrays
from tests.support.candidates import add_candidates, add_user


def test_a_session_and_a_connection_read_the_same_rows(engine: Engine) -> None:
    ids = add_candidates(engine, 3, data_source="aime")
    query = select(Candidate.id, Candidate.data_id, Candidate.difficulty_eval).where(Candidate.id.in_(ids[:2]))
    expected = [(ids[0], "aime_0_remove_1", None), (ids[1], "aime_1_contradict_1", None)]
    with read_session(engine) as session, read_connection(engine) as connection:
        for bind in (session, connection):
            assert sorted(iter_raw_tuples(bind, query)) == expected
            assert sorted(iter_raw(bind, query), key=lambda row: row["id"]) == [
                {"id": i, "data_id": data_id, "difficulty_eval": None} for i, data_id, _ in expected]
            arrays = read_arrays(bind, select(Candidate.id).where(Candidate.id.in_(ids)).order_by(Candidate.id),
                                 [np.int64])
            assert list(arrays) == ["id"] and arrays["id"].tolist() == ids and arrays["id"].dtype == np.int64


def _labels(engine: Engine, count: int) -> list[tuple[int, int, int, float]]:
    """`count` labels of one annotator with varied numbers (negative and fractional times among them); each as
    (candidate id, annotator id, human_check, seconds_spent)."""
    ids = add_candidates(engine, count)
    who = add_user(engine, "ann").id
    rows = [(candidate_id, who, i % 2, (i - count / 2) * 1.25) for i, candidate_id in enumerate(ids)]
    with write_session(engine) as session:
        session.add_all([Annotation(candidate_id=c, annotator_id=a, human_check=h, seconds_spent=s)
                         for c, a, h, s in rows])
    return rows


@pytest.mark.parametrize("chunk_bytes", [1, 45, 1 << 22])
def test_read_arrays_gives_each_column_in_the_rows_order_whatever_the_chunks(engine: Engine,
                                                                              chunk_bytes: int) -> None:
    """Chunks of one byte, of a row and a part, or of everything: the same arrays, of the types asked for."""
    rows = _labels(engine, 40)
    query = select(Annotation.candidate_id, Annotation.annotator_id.label("who"), Annotation.human_check,
                   Annotation.seconds_spent, (Annotation.candidate_id * 3_000_000_000).label("big")
                   ).order_by(Annotation.candidate_id.desc())
    with read_session(engine) as session:
        arrays = read_arrays(session, query, [np.int32, np.int64, np.int16, np.float64, np.int64],
                             chunk_bytes=chunk_bytes)
    expected = sorted(rows, reverse=True)
    assert list(arrays) == ["candidate_id", "who", "human_check", "seconds_spent", "big"]
    assert [array.dtype for array in arrays.values()] == [np.int32, np.int64, np.int16, np.float64, np.int64]
    assert [tuple(row) for row in zip(*(array.tolist() for array in arrays.values()))] == [
        (c, a, h, s, c * 3_000_000_000) for c, a, h, s in expected]


def test_read_arrays_of_no_rows_are_empty_and_a_null_is_refused_by_its_column(engine: Engine) -> None:
    _labels(engine, 3)
    with read_session(engine) as session:
        empty = read_arrays(session, select(Annotation.id, Annotation.seconds_spent).where(Annotation.id < 0),
                            [np.int64, np.float64])
        assert [(key, len(array), array.dtype) for key, array in empty.items()] == [
            ("id", 0, np.int64), ("seconds_spent", 0, np.float64)]
        with pytest.raises(ValueError, match="column difficulty_eval holds a NULL"):
            read_arrays(session, select(Annotation.id, Annotation.difficulty_eval), [np.int64, np.int16])
        coalesced = read_arrays(session, select(func.coalesce(Annotation.difficulty_eval, -1).label("difficulty"),
                                                literal(2.5).label("constant")), [np.int16, np.float64])
        assert coalesced["difficulty"].tolist() == [-1] * 3 and coalesced["constant"].tolist() == [2.5] * 3
