"""The Generate page with `AppTest`: admins only; starts a background run, shows it, cancels it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from streamlit.testing.v1 import AppTest

from annotator import auth
from annotator.db import get_engine, read_session
from annotator.models import Candidate, GenerationRun
from tests.pipeline.conftest import add_problems
from tests.support.openai_server import OpenAIServer

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "generate.py")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return get_engine(f"sqlite:///{tmp_path / 'annotator.sqlite'}")


def _page(engine: Engine, user: auth.User | None) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.session_state["engine"] = engine
    app.session_state["user"] = user
    app.run()
    assert not app.exception, app.exception
    return app


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
    user = None if role is None else auth.User(id=1, name="someone", role=role)
    app = _page(engine, user)
    assert app.error and "Only admins" in app.error[0].value
    assert not app.button and not app.text_input


def test_admin_starts_a_background_run_and_cancels_another(engine: Engine, tmp_path: Path) -> None:
    add_problems(engine, 3)
    admin = auth.User(id=1, name="boss", role="admin")
    with OpenAIServer() as server:
        app = _page(engine, admin)
        app.text_input(key="extract_model").input("m-i")
        app.text_input(key="rewrite_model").input("m-r")
        app.text_input(key="base_url").input(server.url)
        app.text_input(key="api_key_env").input("UNSET_PAGE_TEST_KEY")
        app.button[0].click()
        app.run()
        assert not app.exception, app.exception
        assert app.success and "Run 1 started" in app.success[0].value
        _wait_for(lambda: (r := _run(engine)) is not None and r.status == "succeeded", 60, "the run to finish")
        with read_session(engine) as session:
            assert session.execute(select(func.count()).select_from(Candidate)).scalar_one() == 12
        run = _run(engine)
        assert run is not None and run.created_by == "boss" and run.models["extract"]["base_url"] == server.url

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
