"""Opening a page with `AppTest` as a signed-in user (or as nobody): the one helper page tests use."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from annotator.accounts import auth
from tests.support.candidates import add_user, sign_in_app

PAGES = Path(__file__).resolve().parents[2] / "app_pages"


def open_page(
    page: str, engine: Engine, user: auth.User | None = None, *, name: str | None = None, role: str = "annotator"
) -> AppTest:
    """`app_pages/{page}.py` (or the page file at path `page`) run once, signed in as `user`, or as a new account
    `name` with `role` when `name` is given, else as nobody; fails on an exception."""
    path = page if page.endswith(".py") else str(PAGES / f"{page}.py")
    app = AppTest.from_file(path, default_timeout=60)
    if name is not None:
        user = add_user(engine, name, role=role)
    if user is None:
        app.session_state["engine"] = engine
        app.session_state["user"] = None
    else:
        sign_in_app(app, engine, user)
    app.run()
    assert not app.exception, app.exception
    return app
