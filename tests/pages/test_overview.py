"""The Overview page (AppTest, real SQLite file): progress charts and a statistics table without `None`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Candidate
from annotator.labelling import labels, queue
from tests.support.candidates import add_candidates, add_user
from tests.support.pages import open_page
from tests.support.progress import add_progress


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return get_engine(f"sqlite:///{tmp_path / 'overview.sqlite'}")


def test_progress_is_drawn_and_the_table_has_dashes_not_none(engine: Engine) -> None:
    add_progress(engine)
    app = open_page("overview", engine, name="rev", role="reviewer")
    assert not app.exception, app.exception
    states, per_day = app.get("vega_lite_chart")
    spec = json.loads(states.proto.spec)
    assert spec["title"].startswith("Candidates by state") and spec["mark"]["type"] == "bar"
    assert spec["encoding"]["color"]["scale"]["domain"] == [
        "unlabelled", "in progress", "complete", "disputed", "adjudicated", "filtered", "unverified"
    ]
    assert json.loads(per_day.proto.spec)["title"] == "Labels per day"
    table = app.dataframe[0].value
    assert list(table["problems"]) == ["—", "—", "7", "—", "—", "2", "9"]
    # The bars in the table's order (its per-source and overall totals have no bar).
    groups = [label.rsplit(" (", 1)[0].replace("\n", " · ") for label in spec["encoding"]["y"]["sort"]]
    assert groups == [f"{row.data_source} · {row.rewrite_type}" for row in table.itertuples()
                      if row.rewrite_type != "all" and row.data_source != "all"]


def test_vetted_counts_only_complete_or_adjudicated_candidates(engine: Engine) -> None:
    add_progress(engine)  # two candidates resolved to human_check = 1 by a single label each
    app = open_page("overview", engine, name="rev", role="reviewer")
    assert {m.label: m.value for m in app.metric}["Vetted"] == "2"
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
    app.run()
    assert not app.exception, app.exception
    shown = {m.label: m.value for m in app.metric}
    assert (shown["Checked"], shown["Vetted"], shown["Incomplete"], shown["Hard"]) == ("4", "0", "2", "0")
    table = app.dataframe[0].value
    overall = table[(table["data_source"] == "all") & (table["rewrite_type"] == "all")].iloc[0]
    assert (overall["vetted"], overall["incomplete"]) == (0, 2)


def test_a_label_just_saved_shows_on_the_next_look(engine: Engine) -> None:
    # The figures are stored for every server (`annotator.figures.snapshots`); a small project's are recomputed within
    # the look's patience, so the next look shows the label, not the figures from before it.
    add_progress(engine)
    app = open_page("overview", engine, name="rev", role="reviewer")
    checked = int({m.label: m.value for m in app.metric}["Checked"])
    cat = add_user(engine, "cat")
    with write_session(engine) as session:
        unlabelled = session.execute(select(Candidate.id).where(Candidate.label_count == 0,
                                                                Candidate.status == "pending")).scalars().first()
        labels.record_label(session, candidate_id=unlabelled, annotator_id=cat.id, human_check=1, difficulty_eval=0)
    app.run()
    assert not app.exception, app.exception
    assert int({m.label: m.value for m in app.metric}["Checked"]) == checked + 1
    table = app.dataframe[0].value
    assert table[(table["data_source"] == "all") & (table["rewrite_type"] == "all")].iloc[0]["checked"] == checked + 1


def test_admins_turn_adaptive_overlap_on_where_k_is_set(engine: Engine) -> None:
    from annotator.labelling import adaptive

    add_candidates(engine, 2)
    app = open_page("overview", engine, name="root", role="admin")
    assert not app.exception, app.exception
    assert any("fixed: 1 label(s) per candidate" in caption.value for caption in app.caption)
    app.number_input(key="settings_adaptive_threshold").set_value(0.97).run()
    app.number_input(key="settings_adaptive_max_labels").set_value(4).run()
    app.toggle(key="settings_adaptive").set_value(True).run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert adaptive.overlap(session) == adaptive.Overlap(True, 0.97, 4) and queue.label_target(session) == 4
    assert any("below 0.97, at most 4 label(s)" in caption.value for caption in app.caption)
    app.toggle(key="settings_adaptive").set_value(False).run()
    with read_session(engine) as session:
        assert not adaptive.overlap(session).adaptive and queue.label_target(session) == 1
