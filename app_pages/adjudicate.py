"""Adjudicate: candidates whose labels disagree, lowest agreement first, settled with Annotate's keys.

Every annotator's label and comment is beside the candidate. `1` unsolvable and simple, `2` unsolvable and
hard, `0` not acceptable, `S` skip. The decision wins over the labels and is an event in the history. When
another reviewer decided the dispute since it was shown, the page says who and how, and the same key pressed
again overrides their decision.
"""

from typing import Any

import pandas as pd
import streamlit as st

from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.database.vocabulary import SKIP_KEY, label_name
from annotator.labelling import adjudication, queue
from ui import guard, pages
from ui import view as _view
from ui.keys import keyboard
from ui.markdown import escape_markdown
from ui.ready import is_ready, wait_for_buttons
from ui.writes import page_write, saves

WORKSPACE = "adjudicate"
engine, user = guard.require_page(__file__)
state: dict[str, Any] = st.session_state.setdefault(
    "adjudicate", {"skipped": [], "view": None, "message": None, "queue": adjudication.DisputeQueue()}
)


def _show(session: Any, candidate_id: int | None) -> None:
    state["override"] = None  # (candidate id, label) that a second press of the same key may override
    state["view"] = None if candidate_id is None else queue.load(session, candidate_id=candidate_id,
                                                                  annotator_id=user.id)
    state["labels"] = [] if candidate_id is None else adjudication.dispute_labels(session, candidate_id=candidate_id)
    state["left"] = len(state["queue"]) + (candidate_id is not None)


def _next(session: Any) -> None:
    _show(session, state["queue"].next(session, exclude=state["skipped"]))


def _may_press() -> bool:
    """A key pressed before the candidate was on screen (`ui.ready`) does nothing."""
    return is_ready(WORKSPACE) and guard.permitted(pages.page(__file__).capability)


@saves(state, "decision", capability=Capability.adjudicate)
def _decide(human_check: int, difficulty_eval: int | None) -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    override = state.get("override") == (view["id"], human_check, difficulty_eval)
    try:
        with page_write(engine, user=user) as session:
            adjudication.adjudicate(
                session, candidate_id=view["id"], reviewer_id=user.id, human_check=human_check,
                difficulty_eval=difficulty_eval, override=override,
                comment=(st.session_state.get("adjudicate_comment") or "").strip() or None,
            )
            _next(session)
    except adjudication.DecidedMeanwhile as exc:
        theirs = label_name(exc.human_check, exc.difficulty_eval, view["rewrite_type"])
        state["override"] = (view["id"], human_check, difficulty_eval)
        state["message"] = (f":orange-badge[{escape_markdown(exc.by)} decided this dispute meanwhile: {theirs}.] "
                            "Press the same key again to override their decision, or S to skip.")
        return
    st.session_state["adjudicate_comment"] = ""
    name = label_name(human_check, difficulty_eval, view["rewrite_type"])
    state["message"] = f"Adjudicated {escape_markdown(view['data_id'])}: {name}."


def _skip() -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    state["skipped"].append(view["id"])
    with read_session(engine) as session:
        _next(session)
    state["message"] = f"Skipped {escape_markdown(view['data_id'])}."


def _labels_table(rows: list[dict[str, Any]], rewrite_type: str) -> pd.DataFrame:
    return pd.DataFrame([
        {"annotator": row["annotator"], "label": label_name(row["human_check"], row["difficulty_eval"], rewrite_type),
         "comment": row["comment"] or ""}
        for row in rows
    ])


@st.fragment
def workspace() -> None:
    if not guard.permitted(pages.page(__file__).capability):
        st.rerun(scope="app")
    view = state["view"]
    rewrite_type = (view or {}).get("rewrite_type", "")
    if not is_ready(WORKSPACE):
        heading = "Loading the candidate..."
    else:
        heading = "Nothing to adjudicate" if view is None else escape_markdown(view["data_id"])
    st.markdown(f"#### {heading}")
    with st.container(horizontal=True):
        _view.label_buttons(key_prefix="adjudicate", rewrite_type=rewrite_type, on_decide=_decide,
                            disabled=view is None)
        st.button("Skip", key="adjudicate_skip", shortcut=SKIP_KEY, on_click=_skip, disabled=view is None,
                  width="stretch")
    status = [f"**Disputes left:** {state.get('left', 0)}"]
    if state.get("message"):
        status.append(state["message"])
    st.caption(" · ".join(status))
    if not wait_for_buttons(WORKSPACE):
        return
    if view is None:
        st.success("No disputed candidates left" + (" (some skipped this session)." if state["skipped"] else "."))
        return
    # st.dataframe shows text as text: comments are never rendered as Markdown or HTML.
    st.dataframe(_labels_table(state["labels"], rewrite_type), hide_index=True, width="stretch")
    st.text_input("Comment (optional, saved with the decision)", key="adjudicate_comment", label_visibility="collapsed",
                  placeholder="Comment, optional, saved with the decision (Esc, then a key)")
    _view.candidate(view, shown=())


if state["view"] is None:
    with read_session(engine) as session:
        _next(session)
keyboard()  # Esc leaves the comment: the next key decides
workspace()
