"""The app served with its sign-in cookie set by the server (HttpOnly): `streamlit run server.py`.

The same app as `streamlit run app.py`, through Streamlit's `st.App`, which adds `ui.session_cookie`'s two routes;
see that module for why, and docs/security.md for the cookie's flags.
"""

import os

import streamlit as st

from ui import session_cookie

os.environ[session_cookie.SERVED_VARIABLE] = "1"
app = st.App("app.py", routes=session_cookie.routes())
