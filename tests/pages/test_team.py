"""The Team page (AppTest, real SQLite file, labels recorded as the app records them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from annotator import labels
from annotator.db import get_engine, write_session
from tests.support.candidates import add_candidates, add_user, open_page

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "team.py")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return get_engine(f"sqlite:///{tmp_path / 'team.sqlite'}")


def _open(engine: Engine, name: str, role: str) -> AppTest:
    return open_page(PAGE, engine, name, role)


def test_reviewers_see_each_annotator_and_the_agreement(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    a, b = add_user(engine, "ann"), add_user(engine, "bea")
    decisions = {a.id: [(1, 0), (1, 1), (0, None), (1, 0)], b.id: [(1, 0), (0, None), (0, None), (1, 1)]}
    with write_session(engine) as session:
        for annotator_id, chosen in decisions.items():
            for candidate_id, (check, difficulty) in zip(ids, chosen):
                labels.record_label(session, candidate_id=candidate_id, annotator_id=annotator_id,
                                    human_check=check, difficulty_eval=difficulty, seconds_spent=30.0)
    app = _open(engine, "rev", "reviewer")
    assert not app.exception, app.exception
    people = app.dataframe[0].value.set_index("annotator")
    assert list(people.index) == ["ann", "bea"]
    assert people.loc["ann", "labels"] == 4 and people.loc["ann", "labels per hour"] == 120.0
    assert people.loc["ann", "median seconds"] == 30.0
    human_check, difficulty = [{m.label: m.value for m in app.metric[i : i + 5]} for i in (0, 5)]
    # human_check: 3 of 4 items agree; difficulty_eval: the 2 items both accepted, 1 of them agreed on.
    assert human_check["Items"] == "4" and human_check["Percent agreement"] == "0.750"
    assert difficulty["Items"] == "2" and difficulty["Percent agreement"] == "0.500"
    # The chart of labels per day is drawn, with one bar per annotator and day.
    [chart] = app.get("vega_lite_chart")
    assert '"annotator"' in chart.proto.spec and '"mark": {"type": "bar"' in chart.proto.spec


def test_annotators_may_not_open_the_team_page(engine: Engine) -> None:
    app = _open(engine, "ann", "annotator")
    assert [e.value for e in app.error] == ["Only reviewers and admins may open this page; you are signed in as ann "
                                           "(annotator)."]
    assert not app.dataframe


def test_an_empty_project_says_so(engine: Engine) -> None:
    app = _open(engine, "boss", "admin")
    assert [i.value for i in app.info] == ["Nobody has labelled anything yet."]
