"""The app served with its sign-in cookie set by the server (HttpOnly): `streamlit run server.py`.

The same app as `streamlit run app.py`, through Streamlit's `st.App`, which adds `ui.session_cookie`'s two routes;
see that module for why, and docs/security.md for the cookie's flags.

A bad `ANNOTATOR_*` variable stops the server as it starts, with one line naming it (exit code 2).
"""

import os
import sys

import streamlit as st

from annotator.settings.environment import SettingsError, settings
from ui import session_cookie

try:
    settings()
except SettingsError as exc:
    print(f"error: {exc}", file=sys.stderr)
    raise SystemExit(2) from None
os.environ[session_cookie.SERVED_VARIABLE] = "1"
app = st.App("app.py", routes=session_cookie.routes())
