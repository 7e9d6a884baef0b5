"""The Evaluate page with `AppTest`: admins only; starts a background evaluate run, shows its progress, cancels
another; a bad form is refused with a message and starts nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from streamlit.testing.v1 import AppTest

from annotator.database.engine import read_session
from annotator.database.models import Run, Transcript
from annotator.runs import log_tail
from tests.support.candidates import add_user
from tests.support.evaluation_items import VETTED, add_evaluation_items, scripted_solver
from tests.support.openai_server import OpenAIServer
from tests.support.pages import open_page
from tests.support.waiting import wait_for
from ui.markdown import escape_markdown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "evaluate.py")


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _latest(engine: Engine) -> Run | None:
    with read_session(engine) as session:
        return session.execute(select(Run).order_by(Run.id.desc())).scalars().first()


def _start(app: AppTest) -> None:
    next(b for b in app.button if b.label == "Start run").click()
    app.run()
    app.run()  # AppTest shows the run the press caused, which ends in st.rerun: look again
    assert not app.exception, app.exception


@pytest.mark.parametrize("role", [None, "annotator", "reviewer"])
def test_only_admins_may_evaluate(engine: Engine, role: str | None) -> None:
    user = None if role is None else add_user(engine, "someone", role=role)
    app = open_page(PAGE, engine, user)
    assert app.error and "Only admins" in app.error[0].value
    assert not app.button and not app.text_input


def test_admin_starts_watches_and_cancels_runs(engine: Engine) -> None:
    add_evaluation_items(engine)
    admin = add_user(engine, "boss", role="admin")
    with OpenAIServer(answer=scripted_solver) as server:
        app = open_page(PAGE, engine, admin)
        assert app.info and "No runs yet" in app.info[0].value
        app.text_input(key="model").input("m-x")
        app.text_input(key="base_url").input(server.url)
        app.text_input(key="api_key_env").input("UNSET_PAGE_TEST_KEY")
        app.number_input(key="samples").set_value(2)
        _start(app)
        assert app.success and "Run 1 started" in app.success[0].value
        wait_for(lambda: (r := _latest(engine)) is not None and r.status == "succeeded", 60, "the run to finish")
        with read_session(engine) as session:
            assert session.execute(select(func.count()).select_from(Transcript)).scalar_one() == 2 * len(VETTED)
            prompts = set(session.execute(select(Transcript.prompt)).scalars())
        run = _latest(engine)
        assert run is not None and run.created_by == "boss" and run.prompt_version == "reliable" == prompts.pop()
        assert run.models["model"] == {**run.models["model"], "model": "m-x", "base_url": server.url,
                                       "api_key_env": "UNSET_PAGE_TEST_KEY"}
        # The process writes its summary to its log after the outcome: wait for it.
        wait_for(lambda: "run 1: succeeded" in (log_tail(engine, run_id=1) or ""), 60, "the run's summary")
        app.run()
        assert not app.success  # "Run 1 started" goes once run 1 has ended
        # The run's log (its process's output) is on the page, as text: it ends with the run's summary.
        log = app.code[0].value
        assert "1/18 responses done" in log and "18/18 responses done" in log, log
        assert "run 1: succeeded; 18/18 responses" in log
        row = app.dataframe[0].value.set_index("run").loc[1]
        assert (row["status"], row["responses done / total"], row["transcripts written"], row["model"],
                row["samples"]) == ("succeeded", "18 / 18", 18, "m-x", 2)

        # A second run (the standard prompt) that stalls: its progress is shown, and it can be cancelled.
        server.hold_after(server.total_completed() + 2)
        app.selectbox(key="prompt").set_value("standard")
        _start(app)
        wait_for(lambda: server.held >= 1, 60, "the second run to stall")
        app.run()
        progress = [p.proto.text for p in app.get("progress")]
        assert any(re.match(r"Run 2: running, \d+ of 18 responses done, \d+ requests sent", text)
                   for text in progress), progress
        assert app.success and "Run 2 started" in app.success[0].value  # while it is at work
        cancel = [b for b in app.button if b.label == "Cancel run 2"]
        assert cancel, [b.label for b in app.button]
        cancel[0].click()
        app.run()
        wait_for(lambda: (r := _latest(engine)) is not None and r.status == "cancelled", 60, "the cancellation")
        server.release()
    # What it collected before the cancel is kept: the 2 answers the server gave, and TreeCut's item (the same
    # request under either prompt) from the call cache.
    with read_session(engine) as session:
        standard = session.execute(select(func.count()).where(Transcript.prompt == "standard")).scalar_one()
        run = session.get(Run, 2)
        assert run is not None and run.counters["transcripts_written"] == standard >= 2


def test_a_bad_form_is_refused_and_starts_nothing(engine: Engine) -> None:
    admin = add_user(engine, "boss", role="admin")
    app = open_page(PAGE, engine, admin)
    _start(app)
    assert app.error and "name the model" in app.error[0].value
    app.text_input(key="model").input("gpt-4o")
    app.text_input(key="api_key_env").input("UNSET_PAGE_TEST_KEY")
    _start(app)
    # Messages are shown as text (escaped Markdown): they can hold what the user typed.
    assert app.error and escape_markdown("UNSET_PAGE_TEST_KEY is not set") in app.error[0].value
    assert _latest(engine) is None
