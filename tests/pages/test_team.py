"""The Team page (AppTest, real SQLite file, labels recorded as the app records them)."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import Engine, text
from streamlit.testing.v1 import AppTest

from annotator.accounts import throttle
from annotator.database.engine import read_session, write_session
from annotator.labelling import gold, labels
from tests.support.candidates import add_candidates, add_user
from tests.support.pages import open_page


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _open(engine: Engine, name: str, role: str) -> AppTest:
    return open_page("team", engine, name=name, role=role)


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
    # Kappa against the majority as a chart (its rows are tested in tests/ui/test_charts.py), then labels per
    # day, one bar per annotator and day.
    agreement, per_day = app.get("vega_lite_chart")
    assert '"kappa"' in agreement.proto.spec and '"items"' in agreement.proto.spec
    assert '"annotator"' in per_day.proto.spec and '"type": "bar"' in per_day.proto.spec
    # Nobody labelled a gold item: a dash, not "None".
    assert list(people["gold accuracy"]) == ["—", "—"]
    # Each annotator's Dawid-Skene accuracy, its interval and the items it rests on.
    accuracy = app.table[0].value
    assert list(accuracy.index) == ["ann", "bea"] and list(accuracy["items"]) == [4, 4]
    assert all(re.fullmatch(r"0\.\d{3} – [01]\.\d{3}", interval) for interval in accuracy["95% interval"])
    assert any("Dawid-Skene" in caption.value and "over 4 candidates" in caption.value for caption in app.caption)


def test_annotators_may_not_open_the_team_page(engine: Engine) -> None:
    app = _open(engine, "ann", "annotator")
    assert [e.value for e in app.error] == ["Only reviewers and admins may open this page; you are signed in as ann "
                                           "(annotator)."]
    assert not app.dataframe


def test_an_empty_project_says_so(engine: Engine) -> None:
    app = _open(engine, "boss", "admin")
    assert [i.value for i in app.info] == ["Nobody has labelled anything yet."]


def _label(engine: Engine, candidate_id: int, annotator_id: int, check: int) -> None:
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=candidate_id, annotator_id=annotator_id, human_check=check,
                            difficulty_eval=0 if check else None, seconds_spent=10.0)


def _items(app: AppTest) -> str:
    return next(metric.value for metric in app.metric if metric.label == "Items")


def test_new_labels_show_at_the_next_look_and_the_button_recomputes_now(engine: Engine) -> None:
    ids = add_candidates(engine, 3)
    ann = add_user(engine, "ann")
    _label(engine, ids[0], ann.id, 1)
    app = _open(engine, "rev", "reviewer")
    assert _items(app) == "1"
    # A label recorded as the app records it (with its event) is in the figures at the next run: the fingerprint
    # moved, so the page recomputed (and waited for it) although the figures were seconds old.
    _label(engine, ids[1], ann.id, 1)
    assert _items(app.run()) == "2"
    # A change no fingerprint sees (a label written behind the app's back, no event): the figures stay as they
    # were until the button recomputes them.
    with write_session(engine) as session:
        session.execute(text("INSERT INTO annotation (candidate_id, annotator_id, human_check, created_at, "
                             "updated_at) VALUES (:c, :a, 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"),
                        {"c": ids[2], "a": ann.id})
    assert _items(app.run()) == "2"
    app.button(key="team_refresh").click().run()
    assert _items(app) == "3"
    [age] = [int(m.group(1)) for c in app.caption if (m := re.match(r"Figures from (\d+) s ago", c.value))]
    assert age < 30


def test_gold_accuracy_is_a_number_for_those_who_labelled_gold_items(engine: Engine) -> None:
    ids = add_candidates(engine, 2)
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    with write_session(engine) as session:
        gold.mark_gold(session, candidate_id=ids[0], human_check=1, difficulty_eval=0, created_by=None)
    _label(engine, ids[0], ann.id, 1)
    _label(engine, ids[1], bea.id, 0)
    people = _open(engine, "rev", "reviewer").dataframe[0].value.set_index("annotator")
    assert people.loc["ann", "gold accuracy"] == "1.000" and people.loc["bea", "gold accuracy"] == "—"


def test_admins_unlock_an_account_a_strangers_failures_hold_and_reviewers_see_none(engine: Engine) -> None:
    add_user(engine, "ann")
    with write_session(engine) as session:
        for _ in range(throttle.FREE_FAILURES + 6):  # a wait of minutes: it has not ended when the page shows
            throttle.record_failure(session, attempt_keys=throttle.keys(name="ann", client="203.0.113.9"))
    reviewer = _open(engine, "rev", "reviewer")
    assert "Locked sign-ins" not in [h.value for h in reviewer.subheader]
    assert not [b for b in reviewer.button if b.key == "unlock_ann"]

    admin = _open(engine, "boss", "admin")
    assert "Locked sign-ins" in [h.value for h in admin.subheader]
    assert re.fullmatch(r"\*\*ann\*\* · attempts wait \d+ s more", admin.markdown[0].value), admin.markdown
    admin.button(key="unlock_ann").click().run()
    assert not admin.exception, admin.exception
    assert [s.value for s in admin.success] == ["Unlocked ann: its failed sign-ins are forgotten."]
    assert "Locked sign-ins" not in [h.value for h in admin.subheader]
    with read_session(engine) as session:
        assert throttle.locked_accounts(session) == {}
