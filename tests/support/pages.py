"""Opening a page with `AppTest` as a signed-in user (or as nobody)."""

from __future__ import annotations

from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from annotator import auth
from tests.support.candidates import sign_in_app


def open_page(page: str, engine: Engine, user: auth.User | None) -> AppTest:
    """The page at path `page`, run once for `user` (None: nobody signed in); fails on an exception."""
    app = AppTest.from_file(page, default_timeout=60)
    if user is None:
        app.session_state["engine"] = engine
        app.session_state["user"] = None
    else:
        sign_in_app(app, engine, user)
    app.run()
    assert not app.exception, app.exception
    return app
