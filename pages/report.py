"""Report: Precision and Prudence per model and prompt (ReliableMath Eq. 1-2), as the paper lays them out
(Tables 3 and 6-9), a reliability plot, Prec(U) by difficulty and how far the judge agrees with the reviewers.

The same figures as `python -m annotator report`; reviewers and admins only.
"""

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from annotator.db import read_session
from annotator.transcripts import report as reporting
from annotator.vocabulary import Role
from ui import guard
from ui.snapshot import Snapshot

TTL_SECONDS = 30
FIGURE_COLUMNS = [title for _, title in reporting.PAPER_FIGURES] + ["kappa"]

engine, user = guard.require(Role.reviewer, Role.admin)


def _report() -> dict[str, Any]:
    with read_session(engine) as session:
        groups = reporting.verdict_groups(session)
        return {
            "by_source": reporting.report(session, by=["data_source"], groups=groups),
            "by_difficulty": reporting.report(session, by=["difficulty_eval"], groups=groups),
            "rules_disagree": reporting.rules_disagree(session),
        }


@st.cache_resource(show_spinner="Counting verdicts...")
def _snapshot(url: str) -> Snapshot[dict[str, Any]]:
    # One read of every transcript's verdicts serves everyone; figures older than TTL_SECONDS are recounted in
    # the background while the page shows the last ones (one server-wide snapshot per database).
    return Snapshot(_report, ttl=TTL_SECONDS)


st.title("Report")
data, age = _snapshot(str(engine.url)).get()
if not data["by_source"]:
    st.info("No transcripts yet: collect them on the Evaluate page or import them (`python -m annotator import`).")
    st.stop()

sources = sorted({row["data_source"] for row in data["by_source"]} - {reporting.ALL})
source = st.selectbox("Data source", [reporting.ALL, *sources], help="'all' pools every data source.")
rows = [row for row in data["by_source"] if row["data_source"] == source]
table = pd.DataFrame(reporting.paper_layout(rows)).drop(columns=["data_source"])
st.caption("S/R/F: successful / refused / failed responses; A: solvable items, U: unsolvable items. Verdicts are "
           f"the reviewers' where given, else the judge's. Figures from {age:.0f} s ago, recounted every "
           f"{TTL_SECONDS} s.")
st.dataframe(table, hide_index=True, width="stretch",
             column_config={name: st.column_config.NumberColumn(format="%.3f") for name in FIGURE_COLUMNS})

left, right = st.columns(2)
with left:
    st.subheader("Reliability")
    points = pd.DataFrame([{"model": r["model"], "prompt": r["prompt"], "Prec": r["prec"], "Prud": r["prud"]}
                           for r in rows if r["prec"] is not None])
    st.altair_chart(
        alt.Chart(points).mark_point(filled=True, size=90).encode(
            x=alt.X("Prec:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("Prud:Q", scale=alt.Scale(domain=[0, 1])),
            color="model:N", shape="prompt:N", tooltip=["model:N", "prompt:N", "Prec:Q", "Prud:Q"],
        ),
        width="stretch",
    )
with right:
    st.subheader("Prec(U) by difficulty")
    hard = pd.DataFrame([
        {"model": r["model"], "prompt": r["prompt"], "difficulty_eval": {0: "simple", 1: "hard"}.get(
            r["difficulty_eval"], str(r["difficulty_eval"])), "Prec(U)": r["prec_u"]}
        for r in data["by_difficulty"] if r["difficulty_eval"] != reporting.ALL and r["prec_u"] is not None
    ])
    if hard.empty:
        st.caption("No unsolvable items with a difficulty yet.")
    else:
        st.altair_chart(
            alt.Chart(hard).mark_bar().encode(
                x=alt.X("difficulty_eval:N", title=None), y=alt.Y("Prec(U):Q", scale=alt.Scale(domain=[0, 1])),
                color="prompt:N", xOffset="prompt:N", column=alt.Column("model:N", title=None),
                tooltip=["model:N", "prompt:N", "difficulty_eval:N", "Prec(U):Q"],
            ),
        )

st.subheader("Judge and reviewers")
pooled = [row for row in data["by_source"] if row["data_source"] == reporting.ALL]
columns = st.columns(3)
columns[0].metric("Responses reviewed", sum(row["reviewed"] for row in pooled))
columns[1].metric("Responses", sum(row["A"] + row["U"] for row in pooled))
columns[2].metric("Verdicts the two rule sets differ on", data["rules_disagree"],
                  help="reliablemath (any case, either apostrophe) against reliablemath-exact (the reference code)")
agreement = pd.DataFrame([{"model": r["model"], "prompt": r["prompt"], "reviewed": r["reviewed"],
                           "kappa": r["judge_human_kappa"]} for r in pooled])
st.dataframe(agreement, hide_index=True, width="stretch",
             column_config={"kappa": st.column_config.NumberColumn("Cohen's kappa, judge vs human", format="%.3f")})
