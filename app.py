"""Streamlit entry point: `streamlit run app.py`."""

import streamlit as st

from annotator.db import get_engine


@st.cache_resource
def _engine():  # type: ignore[no-untyped-def]
    # Created (and the schema upgraded) once per server process, not on every rerun.
    return get_engine()


st.set_page_config(page_title="Unsolvable-math annotator", layout="wide")
st.session_state.setdefault("engine", _engine())
navigation = st.navigation([st.Page("pages/overview.py", title="Overview", icon=":material/insights:", default=True)])
navigation.run()
