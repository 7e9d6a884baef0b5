"""Statistics for the Overview: candidates per data source, rewrite type and state, and labels per day."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine

from annotator.database.engine import read_session
from annotator.figures import stats
from tests.support.progress import EXPECTED_STATES, add_progress


def test_every_candidate_is_in_exactly_one_state(engine: Engine) -> None:
    first_day = datetime.now(UTC).date().isoformat()
    given = add_progress(engine)
    with read_session(engine) as session:
        progress = stats.progress(session)
        result = stats.compute(session)
    found = {(r["data_source"], r["rewrite_type"], r["state"]): r["candidates"] for r in progress["states"]}
    assert found == EXPECTED_STATES
    assert sum(found.values()) == result["total"]["candidates"] == 9
    # Within a bar, states come in STATES' order (the chart stacks them so).
    math_remove = [r["state"] for r in progress["states"] if r["data_source"] + r["rewrite_type"] == "mathremove"]
    assert math_remove == ["unlabelled", "complete"]
    # Labels given just before midnight (UTC) count on that day: the day may have changed since.
    days = {first_day, datetime.now(UTC).date().isoformat()}
    assert {row["day"] for row in progress["per_day"]} <= days
    assert sum(row["labels"] for row in progress["per_day"]) == given and len(progress["per_day"]) <= len(days)


def test_table_rows_show_a_dash_where_a_count_does_not_apply(engine: Engine) -> None:
    add_progress(engine)
    with read_session(engine) as session:
        result = stats.compute(session)
    plain, dashed = stats.rows(result), stats.rows(result, missing="—")
    assert [row["problems"] for row in plain] == [None, None, 7, None, None, 2, 9]
    assert [row["problems"] for row in dashed] == ["—", "—", "7", "—", "—", "2", "9"]
