"""The one page guard (`ui.guard`), run by AppTest against a real SQLite file and real sign-ins."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, update
from streamlit.testing.v1 import AppTest

from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.database.engine import write_session
from annotator.database.models import Annotator
from tests.support.candidates import add_user, sign_in_app


def _guarded_page() -> None:
    import streamlit as st

    from ui import guard

    engine, user = guard.require(st.session_state["capability"])
    st.write(f"allowed: {user.name}")

    def act() -> None:
        st.session_state["acted"] = guard.permitted(st.session_state["capability"])

    st.button("act", on_click=act)


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _signed_in(engine: Engine, name: str, role: str, capability: Capability) -> AppTest:
    app = AppTest.from_function(_guarded_page, default_timeout=30)
    sign_in_app(app, engine, add_user(engine, name, role=role))
    app.session_state["capability"] = capability
    return app.run()


def test_a_page_for_admins_stops_with_a_clear_message_for_an_annotator(engine: Engine) -> None:
    app = _signed_in(engine, "ann", "annotator", Capability.administer)
    assert not app.exception
    assert [e.value for e in app.error] == ["Only admins may open this page; you are signed in as ann (annotator)."]
    assert not any("allowed" in m.value for m in app.markdown)


def test_a_page_for_staff_names_the_roles_that_may_open_it(engine: Engine) -> None:
    app = _signed_in(engine, "ann", "annotator", Capability.see_everyones_labels)
    assert [e.value for e in app.error] == [
        "Only reviewers and admins may open this page; you are signed in as ann (annotator)."
    ]


def test_a_page_for_everyone_lets_any_role_in(engine: Engine) -> None:
    app = _signed_in(engine, "rev", "reviewer", Capability.annotate)
    assert not app.error
    assert [m.value for m in app.markdown] == ["allowed: rev"]


def test_nobody_signed_in_is_asked_to_sign_in() -> None:
    app = AppTest.from_function(_guarded_page, default_timeout=30)
    app.session_state["capability"] = Capability.annotate
    app.run()
    assert [e.value for e in app.error] == ["Only signed-in people may open this page; please sign in."]


def test_a_callback_writes_nothing_once_the_account_is_disabled(engine: Engine) -> None:
    app = _signed_in(engine, "boss", "admin", Capability.administer)
    with write_session(engine) as session:
        auth.set_active(session, name="boss", active=False)
    app.button[0].click().run()
    assert app.session_state["acted"] is False
    assert "user" not in app.session_state  # the re-check signed the browser out


def test_a_callback_is_refused_after_the_role_changed(engine: Engine) -> None:
    app = _signed_in(engine, "boss", "admin", Capability.administer)
    with write_session(engine) as session:
        session.execute(update(Annotator).where(Annotator.name == "boss").values(role="annotator"))
    app.button[0].click().run()
    assert app.session_state["acted"] is False
