"""The Generate page with `AppTest`: admins only; starts a background run, shows it, cancels it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate
from annotator.database.models import Run as GenerationRun
from annotator.database.vocabulary import RunKind, RunStatus
from tests.construction.pipeline.conftest import add_problems
from tests.support.candidates import add_user
from tests.support.openai_server import OpenAIServer
from tests.support.pages import open_page
from ui.markdown import escape_markdown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "generate.py")


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _run(engine: Engine) -> GenerationRun | None:
    with read_session(engine) as session:
        return session.execute(select(GenerationRun).order_by(GenerationRun.id.desc())).scalars().first()


def _wait_for(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("role", [None, "annotator", "reviewer"])
def test_only_admins_may_generate(engine: Engine, role: str | None) -> None:
    user = None if role is None else add_user(engine, "someone", role=role)
    app = open_page(PAGE, engine, user)
    assert app.error and "Only admins" in app.error[0].value
    assert not app.button and not app.text_input


def test_admin_starts_a_background_run_and_cancels_another(engine: Engine, tmp_path: Path) -> None:
    add_problems(engine, 3)
    admin = add_user(engine, "boss", role="admin")
    with OpenAIServer() as server:
        app = open_page(PAGE, engine, admin)
        app.text_input(key="extract_model").input("m-i")
        app.text_input(key="rewrite_model").input("m-r")
        app.text_input(key="base_url").input(server.url)
        app.text_input(key="api_key_env").input("UNSET_PAGE_TEST_KEY")
        app.button[0].click()
        app.run()
        app.run()  # AppTest shows the run the press caused, which ends in st.rerun: look again
        assert not app.exception, app.exception
        assert app.success and "Run 1 started" in app.success[0].value
        _wait_for(lambda: (r := _run(engine)) is not None and r.status == "succeeded", 60, "the run to finish")
        with read_session(engine) as session:
            assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() == 12
        run = _run(engine)
        assert run is not None and run.created_by == "boss" and run.models["extract"]["base_url"] == server.url

        # Why candidates were filtered: grouped, counted, with an example to open (the scripted verifier rejects
        # every contradict_2); the banner has gone with the run.
        app.run()
        assert not app.success
        assert any(e.label == "Run 1: why 3 candidate(s) were filtered" for e in app.expander)
        reasons = next(d.value for d in app.dataframe if "reason" in d.value.columns)
        with read_session(engine) as session:
            stored = session.execute(
                select(Candidate.data_id, Candidate.llm_outputs).where(Candidate.status == "filtered")).all()
        assert {row.llm_outputs["filtered_because"] for row in stored} == set(reasons["reason"])
        assert reasons["candidates"].sum() == len(stored) == 3 and run.candidates_filtered == 3
        example = sorted(row.data_id for row in stored)[0]
        app.selectbox(key="filtered_example_1").set_value(example).run()
        shown = [m.value for m in app.markdown]
        assert any(m.startswith(f"**{escape_markdown(example)}**: ") for m in shown), shown
        assert any(t.value.strip() for t in app.text)  # the model's answers, as text

        # A second run that stalls; the page offers to cancel it, and the process stops.
        server.hold_after(server.total_completed() + 1)
        app.text_input(key="extract_model").input("m-i-2")
        app.button[0].click()
        app.run()
        _wait_for(lambda: server.held >= 1, 60, "the second run to stall")
        app.run()
        cancel = [b for b in app.button if b.label.startswith("Cancel run 2")]
        assert cancel, [b.label for b in app.button]
        cancel[0].click()
        app.run()
        _wait_for(lambda: (r := _run(engine)) is not None and r.status == "cancelled", 60, "the cancellation")
        server.release()


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_queued_run_whose_process_is_gone_is_shown_stale_and_can_be_marked_failed(engine: Engine) -> None:
    """A run whose process died before it began (1), or never claimed it (2), is not shown as running for ever;
    one queued for the workers (4) waits, however long."""
    with write_session(engine) as session:
        died = GenerationRun(kind=RunKind.generate, status=RunStatus.queued, prompt_version="v1", pid=_dead_pid(),
                             created_by="boss")
        never = GenerationRun(kind=RunKind.generate, status=RunStatus.queued, prompt_version="v1", pid=os.getpid(),
                              created_by="boss", created_at=datetime.now(UTC) - timedelta(minutes=10))
        starting = GenerationRun(kind=RunKind.generate, status=RunStatus.queued, prompt_version="v1",
                                 created_by="boss", pid=os.getpid())
        waiting = GenerationRun(kind=RunKind.generate, status=RunStatus.queued, prompt_version="v1",
                                created_by="boss", created_at=datetime.now(UTC) - timedelta(minutes=10))
        session.add_all([died, never, starting, waiting])
    admin = add_user(engine, "boss", role="admin")
    app = open_page(PAGE, engine, admin)

    labels = [b.label for b in app.button]
    assert "Cancel run 1" not in labels and "Cancel run 2" not in labels, labels
    assert "Mark run 1 failed" in labels and "Mark run 2 failed" in labels, labels
    # A run queued a moment ago may still be starting: it is shown as active, not stale.
    assert "Cancel run 3" in labels and "Mark run 3 failed" not in labels, labels
    assert "Cancel run 4" in labels and "Mark run 4 failed" not in labels, labels
    assert "Run 4: queued, waiting for a worker" in [p.proto.text for p in app.get("progress")]
    warnings = " ".join(w.value for w in app.warning)
    assert "Run 1 is stale" in warnings and "exited before it began" in warnings, warnings
    assert "Run 2 is stale" in warnings and "not started after" in warnings, warnings
    table = app.dataframe[0].value.set_index("run")
    assert table.loc[1, "status"].startswith("stale") and table.loc[2, "status"].startswith("stale")
    assert table.loc[3, "status"] == RunStatus.queued

    next(b for b in app.button if b.label == "Mark run 1 failed").click()
    app.run()
    assert not app.exception, app.exception
    with read_session(engine) as session:
        run = session.get(GenerationRun, 1)
        assert run is not None and run.status == RunStatus.failed and run.finished_at is not None
        assert "exited before it began" in (run.message or "") and "boss" in (run.message or "")
    labels = [b.label for b in app.button]
    assert "Mark run 1 failed" not in labels and "Mark run 2 failed" in labels, labels
    assert app.dataframe[0].value.set_index("run").loc[1, "status"] == RunStatus.failed
