"""The Browse page (AppTest, real SQLite file): the label state in the first columns, a readable history."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.labelling import labels
from tests.support.candidates import add_candidates, add_user
from tests.support.pages import open_page


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _labelled(engine: Engine) -> list[int]:
    ids = add_candidates(engine, 3)
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=ids[1], annotator_id=ann.id, human_check=1, difficulty_eval=1)
        labels.record_label(session, candidate_id=ids[1], annotator_id=ann.id, human_check=0, difficulty_eval=None,
                            comment="the condition is still there")
    return ids


def test_a_reviewer_sees_data_id_state_my_label_and_labels_first(engine: Engine) -> None:
    _labelled(engine)
    app = open_page("browse", engine, name="rev", role="reviewer")
    assert not app.exception, app.exception
    table = app.dataframe[0].value
    assert list(table.columns)[:4] == ["data_id", "state", "my label", "labels"]
    assert list(table.columns)[-1] == "status"
    assert list(table["state"]) == ["unlabelled", "complete", "unlabelled"]
    assert list(table["labels"]) == [0, 1, 0]
    assert list(table["resolved label"]) == ["", "not acceptable", ""]


def test_an_annotator_sees_her_label_but_no_state(engine: Engine) -> None:
    _labelled(engine)
    app = open_page("browse", engine, name="bea", role="annotator")
    assert not app.exception, app.exception
    table = app.dataframe[0].value
    assert list(table.columns)[:2] == ["data_id", "my label"]
    assert "state" not in table.columns and "labels" not in table.columns


def test_the_history_is_a_table_of_who_when_and_what_changed(engine: Engine) -> None:
    _labelled(engine)
    app = open_page("browse", engine, name="rev", role="reviewer")
    app.session_state["browse_table"] = {"selection": {"rows": [1], "columns": []}}
    app.run()
    assert not app.exception, app.exception
    history = app.dataframe[-1].value
    assert list(history.columns) == ["who", "when", "what", "changed", "comment"]
    assert list(history["changed"]) == ["human_check 1, difficulty_eval 1",
                                        "human_check 1 → 0, difficulty_eval 1 → —, comment added"]
    assert list(history["comment"]) == ["", "the condition is still there"]
    assert "{" not in " ".join(history["changed"])
