"""The demo project: TreeCut pairs of several depths and hand-written LaTeX candidates, from the overview page."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, func, select
from streamlit.testing.v1 import AppTest

from annotator.construction.demo import load_demo
from annotator.database.engine import read_session
from annotator.database.models import Candidate, Problem
from tests.support.candidates import add_user, sign_in_app

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def test_demo_loads_treecut_pairs_and_handwritten_candidates(engine: Engine) -> None:
    summary = load_demo(engine)
    assert summary["problems"] >= 20 and summary["candidates"] >= 28
    with read_session(engine) as session:
        candidates = list(session.execute(select(Candidate)).scalars())
        depths = session.execute(select(Problem.data_source).distinct()).scalars().all()
    by_type: dict[str, int] = {}
    for candidate in candidates:
        by_type[candidate.rewrite_type] = by_type.get(candidate.rewrite_type, 0) + 1
    assert by_type["remove"] >= 20 and by_type["contradict"] >= 4 and by_type["distractor"] >= 4
    treecut = [c for c in candidates if c.data_source.startswith("treecut-")]
    assert len(treecut) == summary["treecut_pairs"]
    assert {c.provenance["params"]["ansDepth"] for c in treecut} == {2, 4, 6, 8}
    assert all(c.extra["checks"][0]["verdict"] == "unsolvable" for c in treecut)
    handwritten = [c for c in candidates if c.data_source == "demo" and c.rewrite_type != "distractor"]
    assert all("$" in c.rewritten_question and c.unsolvable_reason for c in handwritten)
    assert len([d for d in depths if d.startswith("treecut-")]) == 4


def test_loading_the_demo_twice_changes_nothing(sqlite_engine: Engine) -> None:
    load_demo(sqlite_engine)
    again = load_demo(sqlite_engine)
    assert (again["problems"], again["candidates"]) == (0, 0)


def test_overview_offers_the_demo_to_admins_on_an_empty_database(sqlite_engine: Engine) -> None:
    annotator_view = AppTest.from_file(str(PROJECT_ROOT / "app_pages" / "overview.py"), default_timeout=30)
    sign_in_app(annotator_view, sqlite_engine, add_user(sqlite_engine, "ann"))
    annotator_view.run()
    assert not annotator_view.exception
    assert not [b for b in annotator_view.button if b.label == "Load the demo project"]

    app = AppTest.from_file(str(PROJECT_ROOT / "app_pages" / "overview.py"), default_timeout=30)
    sign_in_app(app, sqlite_engine, add_user(sqlite_engine, "boss", role="admin"))
    app.run()
    assert not app.exception
    [button] = [b for b in app.button if b.label == "Load the demo project"]
    button.click().run()
    assert not app.exception
    with read_session(sqlite_engine) as session:
        assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() >= 28
    # Now the statistics show, and the button is gone.
    assert not [b for b in app.button if b.label == "Load the demo project"]
    assert any(m.label == "Candidates" for m in app.metric)
