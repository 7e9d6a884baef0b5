"""Overview: the dataset's statistics (paper Tables 2, 10, 11), or how to get started on an empty database."""

import pandas as pd
import streamlit as st

from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.construction.demo import load_demo
from annotator.database.engine import read_session
from annotator.figures import stats
from annotator.labelling import adaptive, audit, queue
from annotator.settings import limits
from ui import charts, guard
from ui.markdown import escape_markdown
from ui.snapshot import OVERVIEW_TTL_SECONDS, overview_snapshot, show_freshness
from ui.writes import page_write, saves, writes

engine, user = guard.require_page(__file__)
snapshot = overview_snapshot(engine)
is_admin = auth.allows(user, Capability.administer)
settings = st.session_state.setdefault("overview_settings", {})  # the last write's message


@writes(Capability.administer)  # loading data changes the project: checked when the button acts, not only when drawn
def _load_demo() -> None:
    load_demo(engine)
    snapshot.refresh()  # the demo's figures, not the empty database's


st.title("Overview")
reading = snapshot.get()
result, progress = reading.value["stats"], reading.value["progress"]

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
    target = queue.labels_wanted(result["labels_per_candidate"],
                                 count_imported=result.get("imported_labels_count", True))
    # A row that wraps: each figure as wide as its title (six fixed columns cut "Incomplete" at 1024 px).
    row = st.container(horizontal=True, gap="medium")
    row.metric("Problems", result["problems"], width="content")
    row.metric("Candidates", total["candidates"], width="content")
    row.metric("Checked", total["checked"], width="content")
    row.metric("Vetted", total["vetted"], width="content", help=f"{target} resolving to human_check = 1, "
               "or adjudicated so; the candidates the reliablemath export releases.")
    row.metric("Incomplete", total["incomplete"], width="content", help=f"Resolved to human_check = 1 over fewer "
               f"than {target} and not adjudicated: not vetted yet, left out of the release.")
    row.metric("Hard", total["hard"], width="content")
    audited = result["audit"]
    share = audited["unsolvable_share"]
    row.metric("Truly unsolvable (audit)", audit.NOT_AUDITED if share is None else f"{share:.1%}", width="content",
               help="The share of vetted candidates a reviewer found truly unsolvable in the audit sample "
               "(`python -m annotator audit draw`, then Adjudicate's audit queue), with its 95% Wilson interval.")
    if (audited.get("model_estimate") or {}).get("unsolvable_share") is not None:
        row.metric("Truly unsolvable (model)", f"{audited['model_estimate']['unsolvable_share']:.1%}",
                   width="content", help="The same share estimated by a model of the annotators' labels.")
    st.caption(f"Audit: {escape_markdown(audit.describe(audited))}")
    show_freshness(snapshot, reading, ttl=OVERVIEW_TTL_SECONDS, key="overview")
    st.subheader("Progress")
    table = stats.rows(result, missing="—")
    # One bar per data source and rewrite type (in the table's order), its candidates split by state.
    frame, order = charts.state_rows(progress["states"], table)
    st.altair_chart(charts.states_chart(frame, order, states=stats.STATES), width="stretch", key="chart_states")
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")
    if progress["per_day"]:
        st.altair_chart(charts.per_day_chart(progress["per_day"]), width="stretch", key="chart_per_day")
    else:
        st.caption("Labels per day will show here once people label candidates.")


@saves(settings, "setting", capability=Capability.administer)
def _save_labels_per_candidate() -> None:
    # Checked again when it changes data, not only when the control is drawn: in the write's own transaction.
    value = int(st.session_state["settings_labels_per_candidate"])
    with page_write(engine, user=user) as session:
        queue.set_labels_per_candidate(session, value=value)  # moves the figures' fingerprint: the next look waits
    st.toast(f"Labels per candidate set to {value}.")


@saves(settings, "setting", capability=Capability.administer)
def _save_imported_labels_count() -> None:
    value = bool(st.session_state["settings_imported_labels_count"])
    with page_write(engine, user=user) as session:
        queue.set_imported_labels_count(session, value=value)  # moves the figures' fingerprint too
    st.toast("Imported labels " + ("count toward" if value else "no longer count toward") + " labels per candidate.")


OVERLAP_KEYS = ("settings_adaptive", "settings_adaptive_threshold", "settings_adaptive_max_labels")


@saves(settings, "setting", capability=Capability.administer)
def _save_overlap() -> None:
    state = st.session_state
    with page_write(engine, user=user) as session:  # refits the annotators' accuracies and settles every candidate
        adaptive.set_overlap(session, adaptive=bool(state["settings_adaptive"]),
                             threshold=float(state["settings_adaptive_threshold"]),
                             max_labels=int(state["settings_adaptive_max_labels"]))
    st.toast("Overlap saved.")


def _overlap_settings() -> None:
    """Adaptive overlap: on or off, the posterior that settles a candidate, the most labels; and what that means."""
    with read_session(engine) as session:
        setting = adaptive.overlap(session)
        described = adaptive.describe(setting, queue.labels_per_candidate(session))
    for key, value in zip(OVERLAP_KEYS, (setting.adaptive, setting.threshold, setting.max_labels), strict=True):
        st.session_state.setdefault(key, value)
    st.toggle("Adaptive overlap", key="settings_adaptive", on_change=_save_overlap,
              help="Another label only while the posterior of the labels' majority (from each annotator's accuracy, "
                   "Team) is below the threshold; labels that disagree at the most labels go to a reviewer.")
    st.number_input("Posterior that settles a candidate", min_value=float(limits.ADAPTIVE_THRESHOLD.low),
                    max_value=float(limits.ADAPTIVE_THRESHOLD.high), step=0.01, format="%.4f",
                    key="settings_adaptive_threshold", on_change=_save_overlap)
    st.number_input("Most labels per candidate", min_value=int(limits.ADAPTIVE_MAX_LABELS.low),
                    max_value=int(limits.ADAPTIVE_MAX_LABELS.high), step=1, key="settings_adaptive_max_labels",
                    on_change=_save_overlap)
    st.caption(f"Overlap: {described}.")


# Project settings, for admins only (the same as `python -m annotator settings ...`).
if is_admin:
    st.subheader("Project settings")
    if message := settings.pop("message", None):
        st.warning(message)
        for key in ("settings_labels_per_candidate", "settings_imported_labels_count", *OVERLAP_KEYS):
            st.session_state.pop(key, None)  # not saved: show the stored values again
    with read_session(engine) as session:
        st.session_state.setdefault("settings_labels_per_candidate", queue.labels_per_candidate(session))
        st.session_state.setdefault("settings_imported_labels_count", queue.imported_labels_count(session))
        importers = queue.label_importers(session)
    st.number_input(
        "Labels per candidate", min_value=int(limits.LABELS_PER_CANDIDATE.low),
        max_value=int(limits.LABELS_PER_CANDIDATE.high), step=1, key="settings_labels_per_candidate",
        on_change=_save_labels_per_candidate,
        help="How many annotators label each candidate; the queue never hands a candidate to more. With adaptive "
             "overlap on, the most labels below counts instead.",
    )
    st.checkbox(
        "Imported labels count toward labels per candidate", key="settings_imported_labels_count",
        on_change=_save_imported_labels_count,
        help="Labels that came with an import (the release's own import:reliablemath, a sheet imported without "
             "--annotator) fill one of a candidate's labels per candidate when ticked. Untick it to re-check an "
             "imported dataset: every candidate then gets that many labels from the team's own people.",
    )
    wanted = queue.labels_wanted(int(st.session_state["settings_labels_per_candidate"]),
                                 count_imported=bool(st.session_state["settings_imported_labels_count"]))
    came_with = ", ".join(escape_markdown(name) for name in importers)
    st.caption(f"A candidate is complete with {wanted}." + (f" Labels came with an import from {came_with}."
                                                             if importers else " No labels came with an import."))
    _overlap_settings()
