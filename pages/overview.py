"""Overview: the dataset's statistics (paper Tables 2, 10, 11), or how to get started on an empty database."""

import pandas as pd
import streamlit as st

from annotator import stats
from annotator.db import read_session
from annotator.demo import load_demo

st.title("Overview")
with read_session(st.session_state["engine"]) as session:
    result = stats.compute(session)

if result["problems"] == 0 and result["total"]["candidates"] == 0:
    st.info(
        "The database is empty. Import the ReliableMath release or your own candidates from a terminal:\n\n"
        "```\npython -m annotator import path/to/ReliableMath/data\n"
        "python -m annotator import my_candidates.jsonl --map question=problem,rewritten_question=rewrite\n```"
    )
    # An empty database has nobody's data to protect, so no role check: anyone may load the demo.
    if st.button("Load the demo project", help="TreeCut pairs and a few hand-written problems, generated locally."):
        load_demo(st.session_state["engine"])
        st.rerun()
else:
    total = result["total"]
    columns = st.columns(5)
    columns[0].metric("Problems", result["problems"])
    columns[1].metric("Candidates", total["candidates"])
    columns[2].metric("Checked", total["checked"])
    columns[3].metric("Kept", total["kept"])
    columns[4].metric("Hard", total["hard"])
    st.dataframe(pd.DataFrame(stats.rows(result)), hide_index=True, width="stretch")
