"""The Overview page (AppTest, real SQLite file): progress charts and a statistics table without `None`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate
from annotator.labelling import labels, queue
from tests.support.candidates import add_candidates, add_user
from tests.support.pages import open_page
from tests.support.progress import add_progress


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


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


def test_the_audit_shows_not_audited_then_the_share_with_its_interval(engine: Engine) -> None:
    """Two vetted candidates (`add_progress`): "not audited" with no sample and with one undecided; after two
    decisions the share and its Wilson interval, and the sample it rests on."""
    from statsmodels.stats.proportion import proportion_confint

    from annotator.labelling import audit

    add_progress(engine)
    app = open_page("overview", engine, name="rev", role="reviewer")
    assert {m.label: m.value for m in app.metric}["Truly unsolvable (audit)"] == "not audited"
    shown = [caption.value.replace("\\", "") for caption in app.caption]  # as Markdown shows it: unescaped
    assert "Audit: not audited (no audit sample drawn)" in shown
    rev = app.session_state["user"].id
    with write_session(engine) as session:
        audit.draw(session, size=2, seed=4, drawn_by=rev)
        first = audit.next_to_audit(session)
        audit.decide(session, candidate_id=first, reviewer_id=rev, unsolvable=1)
    app.run()
    assert not app.exception, app.exception
    low, high = proportion_confint(1, 1, alpha=0.05, method="wilson")
    assert {m.label: m.value for m in app.metric}["Truly unsolvable (audit)"] == "100.0%"
    caption = next(c.value.replace("\\", "") for c in app.caption if c.value.startswith("Audit:"))
    assert f"(95% Wilson interval {low:.3f} to {high:.3f}): 1 of 1 audited; 2 drawn by rev" in caption
    # Beside it, the Dawid-Skene estimate of the same share.
    from annotator.labelling.precision_estimate import estimated_unsolvable_share

    model = estimated_unsolvable_share(engine).share
    assert caption.endswith(f"seed 4; model-based estimate {model:.3f}")
    assert {m.label: m.value for m in app.metric}["Truly unsolvable (model)"] == f"{model:.1%}"


def _import_small_release(engine: Engine, tmp_path: Path) -> None:
    from tests.support.release import import_release
    from tests.support.small_release import SOLVE, UNSOL

    release = tmp_path / "release"
    release.mkdir()
    (release / "solve.json").write_text(json.dumps(SOLVE, indent=4), encoding="utf-8")
    (release / "unsol.json").write_text(json.dumps(UNSOL, indent=4), encoding="utf-8")
    import_release(engine, release)


def test_admins_say_whether_imported_labels_count_beside_labels_per_candidate(engine: Engine, tmp_path: Path) -> None:
    """Beside k: whether imported labels fill it (ticked by default) and who they came from; unticked, the imported
    release waits for the team's own labels (Vetted 0, Incomplete 2) and the caption says what complete means."""
    _import_small_release(engine, tmp_path)
    app = open_page("overview", engine, name="ada", role="admin")
    box = app.checkbox(key="settings_imported_labels_count")
    assert box.value is True and box.label == "Imported labels count toward labels per candidate"
    captions = [caption.value for caption in app.caption]
    # The name as text: escaped Markdown (`:` would start an emoji code).
    assert "A candidate is complete with 1 label(s). Labels came with an import from import\\:reliablemath." in captions
    assert {m.label: m.value for m in app.metric}["Vetted"] == "2"

    box.uncheck().run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        assert queue.imported_labels_count(session) is False
    shown = {m.label: m.value for m in app.metric}
    assert (shown["Vetted"], shown["Incomplete"]) == ("0", "2")
    wanted = "A candidate is complete with 1 label(s) besides imported ones."
    assert any(caption.value.startswith(wanted) for caption in app.caption)
    # Another admin's page shows the stored choice.
    assert open_page("overview", engine, name="bo", role="admin").checkbox(
        key="settings_imported_labels_count").value is False
    # Those who may not change the project see no setting.
    assert not open_page("overview", engine, name="rev", role="reviewer").checkbox


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
        assert adaptive.overlap(session) == adaptive.Overlap(True, 0.97, 4) and queue.label_target(session).labels == 4
    assert any("below 0.97, at most 4 label(s)" in caption.value for caption in app.caption)
    app.toggle(key="settings_adaptive").set_value(False).run()
    with read_session(engine) as session:
        assert not adaptive.overlap(session).adaptive and queue.label_target(session).labels == 1
