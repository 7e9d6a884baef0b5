"""Adjudicate: candidates whose labels disagree, lowest agreement first, settled with Annotate's keys; and the
audit sample, re-checked with keys.

Disputes: every annotator's label and comment is beside the candidate, and every reviewer's decision on it with
its comment. `1` unsolvable and simple, `2` unsolvable and hard, `0` not acceptable, `S` skip. The decision wins
over the labels and is an event in the history. When another reviewer decided the dispute since it was shown, the
page says who and how, shows their decision and comment, and the same key pressed again overrides their decision
(theirs stays in the history, on Browse).

Audit sample (the sidebar's queue): the candidates drawn from the vetted set (`python -m annotator audit draw`),
shown without their labels, so that the re-check is the reviewer's own: `1` truly unsolvable, `0` not, `S` skip.
"""

from typing import Any

import pandas as pd
import streamlit as st

from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.database.vocabulary import SKIP_KEY, label_name
from annotator.labelling import adjudication, audit, queue
from ui import guard, pages
from ui import view as _view
from ui.keys import keyboard
from ui.markdown import escape_markdown
from ui.ready import is_ready, wait_for_buttons
from ui.writes import page_write, saves

WORKSPACE = "adjudicate"
DISPUTES, AUDIT = "Disputes", "Audit sample"
engine, user = guard.require_page(__file__)
state: dict[str, Any] = st.session_state.setdefault(
    "adjudicate", {"skipped": [], "view": None, "message": None, "queue": adjudication.DisputeQueue()}
)
state.setdefault("audit_skipped", [])


def _auditing() -> bool:
    return state.get("queue_name") == AUDIT


def _show(session: Any, candidate_id: int | None) -> None:
    state["override"] = None  # (candidate id, label) that a second press of the same key may override
    state["view"] = None if candidate_id is None else queue.load(session, candidate_id=candidate_id,
                                                                  annotator_id=user.id)
    disputed = candidate_id is not None and not _auditing()
    state["labels"] = adjudication.dispute_labels(session, candidate_id=candidate_id) if disputed else []
    state["decisions"] = adjudication.decision_history(session, candidate_id=candidate_id) if disputed else []
    if _auditing():
        state["left"] = audit.left_to_audit(session)
        state["drawn"] = audit.current_sample(session) is not None
    else:
        state["left"] = len(state["queue"]) + (candidate_id is not None)


def _next(session: Any) -> None:
    if _auditing():
        _show(session, audit.next_to_audit(session, exclude=state["audit_skipped"]))
    else:
        _show(session, state["queue"].next(session, exclude=state["skipped"]))


def _may_press() -> bool:
    """A key pressed before the candidate was on screen (`ui.ready`) does nothing."""
    return is_ready(WORKSPACE) and guard.permitted(pages.page(__file__).capability)


def _comment() -> str | None:
    return (st.session_state.get("adjudicate_comment") or "").strip() or None


@saves(state, "decision", capability=Capability.adjudicate)
def _decide(human_check: int, difficulty_eval: int | None) -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    override = state.get("override") == (view["id"], human_check, difficulty_eval)
    try:
        with page_write(engine, user=user) as session:
            adjudication.adjudicate(session, candidate_id=view["id"], reviewer_id=user.id, human_check=human_check,
                                    difficulty_eval=difficulty_eval, override=override, comment=_comment())
            _next(session)
    except adjudication.DecidedMeanwhile as exc:
        theirs = label_name(exc.human_check, exc.difficulty_eval, view["rewrite_type"])
        with read_session(engine) as session:  # their decision and comment, in the table below
            state["decisions"] = adjudication.decision_history(session, candidate_id=view["id"])
        state["override"] = (view["id"], human_check, difficulty_eval)
        state["message"] = (f":orange-badge[{escape_markdown(exc.by)} decided this dispute meanwhile: {theirs}.] "
                            "Their comment is under Decisions. Press the same key again to override their decision, "
                            "or S to skip.")
        return
    st.session_state["adjudicate_comment"] = ""
    name = label_name(human_check, difficulty_eval, view["rewrite_type"])
    state["message"] = f"Adjudicated {escape_markdown(view['data_id'])}: {name}."


@saves(state, "audit decision", capability=Capability.audit)
def _audit(unsolvable: int) -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    try:
        with page_write(engine, user=user) as session:
            audit.decide(session, candidate_id=view["id"], reviewer_id=user.id, unsolvable=unsolvable,
                         comment=_comment())
            _next(session)
    except audit.AuditedMeanwhile as exc:
        state["audit_skipped"].append(view["id"])
        with read_session(engine) as session:
            _next(session)
        state["message"] = (f":orange-badge[{escape_markdown(exc.by)} audited {escape_markdown(view['data_id'])} "
                            f"meanwhile: {audit.DECISIONS[exc.unsolvable]}.] Yours was not saved.")
        return
    st.session_state["adjudicate_comment"] = ""
    state["message"] = f"Audited {escape_markdown(view['data_id'])}: {audit.DECISIONS[unsolvable]}."


def _skip() -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    state["audit_skipped" if _auditing() else "skipped"].append(view["id"])
    with read_session(engine) as session:
        _next(session)
    state["message"] = f"Skipped {escape_markdown(view['data_id'])}."


def _switch() -> None:
    """Another queue chosen: its first candidate comes with this run."""
    state["queue_name"] = st.session_state["adjudicate_queue"]
    state["view"], state["message"] = None, None
    state["queue"] = adjudication.DisputeQueue()  # from the lowest again: the dispute left on screen comes back
    with read_session(engine) as session:
        _next(session)


def _labels_table(rows: list[dict[str, Any]], rewrite_type: str) -> pd.DataFrame:
    return pd.DataFrame([
        {"annotator": row["annotator"], "label": label_name(row["human_check"], row["difficulty_eval"], rewrite_type),
         "comment": row["comment"] or ""}
        for row in rows
    ])


def _decisions_table(rows: list[dict[str, Any]], rewrite_type: str) -> pd.DataFrame:
    return pd.DataFrame([
        {"reviewer": row["reviewer"], "decision": label_name(row["human_check"], row["difficulty_eval"], rewrite_type),
         "comment": row["comment"] or "", "when": row["at"].strftime("%Y-%m-%d %H:%M:%S"),
         "stands": "yes" if row["current"] else "no"}
        for row in rows
    ])


def _buttons(view: dict[str, Any] | None) -> None:
    if _auditing():
        for unsolvable, kind in ((1, "primary"), (0, "secondary")):
            st.button(audit.DECISIONS[unsolvable].capitalize(), key=f"adjudicate_audit_{unsolvable}",
                      shortcut=str(unsolvable), on_click=_audit, args=(unsolvable,), disabled=view is None,
                      width="stretch", type=kind)  # type: ignore[arg-type]
    else:
        _view.label_buttons(key_prefix="adjudicate", rewrite_type=(view or {}).get("rewrite_type", ""),
                            on_decide=_decide, disabled=view is None)
    st.button("Skip", key="adjudicate_skip", shortcut=SKIP_KEY, on_click=_skip, disabled=view is None,
              width="stretch")


def _nothing_left() -> None:
    if not _auditing():
        st.success("No disputed candidates left" + (" (some skipped this session)." if state["skipped"] else "."))
    elif not state.get("drawn"):
        st.info("No audit sample is drawn yet: a reviewer or an admin draws one from the vetted candidates with "
                "`python -m annotator audit draw --size N --seed S --by NAME`.")
    else:
        st.success("Nothing left to audit" + (" (some skipped this session)." if state["audit_skipped"] else "."))


@st.fragment
def workspace() -> None:
    if not guard.permitted(pages.page(__file__).capability):
        st.rerun(scope="app")
    view = state["view"]
    if not is_ready(WORKSPACE):
        heading = "Loading the candidate..."
    else:
        heading = ("Nothing to audit" if _auditing() else "Nothing to adjudicate") if view is None else \
            escape_markdown(view["data_id"])
    st.markdown(f"#### {heading}")
    with st.container(horizontal=True):
        _buttons(view)
    status = [f"**{'Left to audit' if _auditing() else 'Disputes left'}:** {state.get('left', 0)}"]
    if state.get("message"):
        status.append(state["message"])
    st.caption(" · ".join(status))
    if not wait_for_buttons(WORKSPACE):
        return
    if view is None:
        _nothing_left()
        return
    # st.dataframe shows text as text: comments are never rendered as Markdown or HTML.
    if not _auditing():
        st.dataframe(_labels_table(state["labels"], view["rewrite_type"]), hide_index=True, width="stretch")
        if state["decisions"]:
            st.markdown("**Decisions**")
            st.dataframe(_decisions_table(state["decisions"], view["rewrite_type"]), hide_index=True,
                         width="stretch")
    st.text_input("Comment (optional, saved with the decision)", key="adjudicate_comment", label_visibility="collapsed",
                  placeholder="Comment, optional, saved with the decision (Esc, then a key)")
    _view.candidate(view, shown=())


# The queue chosen is kept with the page's state: Streamlit forgets a widget's value when another page is shown.
st.sidebar.selectbox("Queue", (DISPUTES, AUDIT), index=(DISPUTES, AUDIT).index(state.get("queue_name", DISPUTES)),
                     key="adjudicate_queue", on_change=_switch)
st.sidebar.caption("Disputes: labels that disagree. Audit sample: vetted candidates drawn to re-check.")
if state["view"] is None:
    with read_session(engine) as session:
        _next(session)
keyboard()  # Esc leaves the comment: the next key decides
workspace()
