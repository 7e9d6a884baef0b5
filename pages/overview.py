"""Overview: the dataset's statistics (paper Tables 2, 10, 11), or how to get started on an empty database."""

import altair as alt
import pandas as pd
import streamlit as st

from annotator import auth, limits, queue, stats
from annotator.db import read_session
from annotator.demo import load_demo
from annotator.vocabulary import Role
from ui import guard
from ui.writes import page_write, saves

engine, user = guard.require()
is_admin = auth.allows(user, Role.admin)
settings = st.session_state.setdefault("overview_settings", {})  # the last write's message


def _load_demo() -> None:
    # Loading data changes the project: checked when the button acts, not only when it is drawn.
    if guard.permitted(Role.admin):
        load_demo(engine)


st.title("Overview")
with read_session(engine) as session:
    result = stats.compute(session)

if result["problems"] == 0 and result["total"]["candidates"] == 0:
    st.info(
        "The database is empty. An admin imports the ReliableMath release or your own candidates on the "
        "**Import and export** page, or from a terminal:\n\n"
        "```\npython -m annotator import path/to/ReliableMath/data\n"
        "python -m annotator import my_candidates.jsonl --map question=problem,rewritten_question=rewrite\n```"
    )
    if is_admin:
        st.button(
            "Load the demo project", on_click=_load_demo,
            help="TreeCut pairs and a few hand-written problems, generated locally.",
        )
    else:
        st.caption("An admin can load a demo project here.")
else:
    total = result["total"]
    target = result["labels_per_candidate"]
    columns = st.columns(6)
    columns[0].metric("Problems", result["problems"])
    columns[1].metric("Candidates", total["candidates"])
    columns[2].metric("Checked", total["checked"])
    columns[3].metric("Kept", total["kept"], help=f"Vetted: {int(target)} label(s) resolving to human_check = 1, or "
                      "adjudicated so; the candidates the reliablemath export releases.")
    columns[4].metric("Incomplete", total["incomplete"], help="Resolved to human_check = 1 over fewer than "
                      f"{int(target)} label(s) and not adjudicated: not vetted yet, left out of the release.")
    columns[5].metric("Hard", total["hard"])
    with read_session(engine) as session:
        progress = stats.progress(session)
    st.subheader("Progress")
    states = pd.DataFrame(progress["states"])
    states["group"] = states["data_source"] + " · " + states["rewrite_type"]
    # One bar per data source and rewrite type, its candidates stacked by state in STATES' order.
    st.altair_chart(
        alt.Chart(states, title="Candidates by state").mark_bar().encode(
            y=alt.Y("group:N", title="data source · rewrite type"),
            x=alt.X("candidates:Q", stack="zero"),
            color=alt.Color("state:N", scale=alt.Scale(domain=list(stats.STATES)), title="state"),
            order=alt.Order("order:Q"),
            tooltip=["data_source:N", "rewrite_type:N", "state:N", "candidates:Q"],
        ).transform_calculate(order=f"indexof({list(stats.STATES)}, datum.state)"),
        width="stretch", key="chart_states",
    )
    if progress["per_day"]:
        st.altair_chart(
            alt.Chart(pd.DataFrame(progress["per_day"]), title="Labels per day").mark_bar().encode(
                x=alt.X("day:O", title="day"), y=alt.Y("labels:Q"), tooltip=["day:O", "labels:Q"],
            ),
            width="stretch", key="chart_per_day",
        )
    else:
        st.caption("Labels per day will show here once people label candidates.")
    st.dataframe(pd.DataFrame(stats.rows(result, missing="—")), hide_index=True, width="stretch")


@saves(settings, "setting")
def _save_labels_per_candidate() -> None:
    # Checked again when it changes data, not only when the control is drawn: in the write's own transaction.
    value = int(st.session_state["settings_labels_per_candidate"])
    with page_write(engine, user=user, roles=(Role.admin,)) as session:
        queue.set_labels_per_candidate(session, value=value)
    st.toast(f"Labels per candidate set to {value}.")


# Project settings, for admins only (the same as `python -m annotator settings ...`).
if is_admin:
    st.subheader("Project settings")
    if message := settings.pop("message", None):
        st.warning(message)
        st.session_state.pop("settings_labels_per_candidate", None)  # not saved: show the stored value again
    with read_session(engine) as session:
        st.session_state.setdefault("settings_labels_per_candidate", queue.labels_per_candidate(session))
    st.number_input(
        "Labels per candidate", min_value=int(limits.LABELS_PER_CANDIDATE.low),
        max_value=int(limits.LABELS_PER_CANDIDATE.high), step=1, key="settings_labels_per_candidate",
        on_change=_save_labels_per_candidate,
        help="How many annotators label each candidate; the queue never hands a candidate to more.",
    )
