"""`annotator.database.raw_rows`: a select's rows straight from the driver, through an ORM session or a Core
connection alike, on each backend (PostgreSQL's `read_frame` through COPY)."""

from __future__ import annotations

from sqlalchemy import Engine, select

from annotator.database.engine import read_connection, read_session
from annotator.database.models import Candidate
from annotator.database.raw_rows import iter_raw, iter_raw_tuples, read_frame
from tests.support.candidates import add_candidates


def test_a_session_and_a_connection_read_the_same_rows(engine: Engine) -> None:
    ids = add_candidates(engine, 3, data_source="aime")
    query = select(Candidate.id, Candidate.data_id, Candidate.difficulty_eval).where(Candidate.id.in_(ids[:2]))
    expected = [(ids[0], "aime_0_remove_1", None), (ids[1], "aime_1_contradict_1", None)]
    with read_session(engine) as session, read_connection(engine) as connection:
        for bind in (session, connection):
            assert sorted(iter_raw_tuples(bind, query)) == expected
            assert sorted(iter_raw(bind, query), key=lambda row: row["id"]) == [
                {"id": i, "data_id": data_id, "difficulty_eval": None} for i, data_id, _ in expected]
            frame = read_frame(bind, select(Candidate.id).where(Candidate.id.in_(ids)).order_by(Candidate.id))
            assert list(frame.columns) == ["id"] and frame["id"].tolist() == ids
