"""Annotate: the next candidate in my queue, decided with one key.

`1` unsolvable and simple, `2` unsolvable and hard, `0` not acceptable, `S` skip, `B` back. Each decision
runs in a button callback, before the page is drawn again: the label, its event, the next candidate and its
claim are one transaction, committed before the next candidate shows. Nothing else touches the database on
a rerun (the progress bars move with each decision and are counted again only now and then:
`ui.queue_progress`).
"""

import time
from pathlib import Path
from typing import Any

import streamlit as st

from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.database.vocabulary import BACK_KEY, SKIP_KEY, label_name
from annotator.labelling import queue
from ui import guard, pages
from ui import queue_progress as _progress
from ui import view as _view
from ui.keys import keyboard
from ui.markdown import escape_markdown
from ui.ready import is_ready, wait_for_buttons
from ui.writes import page_write, saves

WORKSPACE = "annotate"
ALL = "(all)"
HERE = Path(__file__).resolve().parent

engine, user = guard.require_page(__file__)
state: dict[str, Any] = st.session_state.setdefault(
    "annotate",
    {"loaded": False, "view": None, "mode": "queue", "skipped": [], "mine": 0, "message": None, "shown": []},
)


@st.cache_data(ttl=60, show_spinner=False)
def _filter_options(url: str) -> dict[str, list[str]]:
    with read_session(engine) as session:
        return queue.filter_options(session)


def _filters() -> dict[str, str | None]:
    source = st.session_state.get("queue_data_source", ALL)
    rewrite = st.session_state.get("queue_rewrite_type", ALL)
    return {"data_source": None if source == ALL else source, "rewrite_type": None if rewrite == ALL else rewrite}


def _show(session: Any, candidate_id: int | None, mode: str) -> None:
    """Put `candidate_id` on screen (state only; the page draws it after the callback)."""
    view = None if candidate_id is None else queue.load(session, candidate_id=candidate_id, annotator_id=user.id)
    state["view"] = view
    state["mode"] = mode if view is not None else "queue"
    state["shown_at"] = time.monotonic()
    mine = (view or {}).get("my_label") or {}
    st.session_state["comment"] = mine.get("comment") or ""


def _next_from_queue(session: Any) -> None:
    candidate_id = queue.claim_next(session, annotator_id=user.id, exclude=state["skipped"], **_filters())
    _show(session, candidate_id, "queue")


@saves(state, "place in the queue", capability=Capability.annotate,
       busy="The database is busy; reload the page in a moment for your next candidate.")
def _load() -> None:
    state["loaded"] = False
    with page_write(engine, user=user) as session:
        _next_from_queue(session)
    state["loaded"] = True


def _signed_in() -> bool:
    """Whether the sign-in still holds (ended, or the account disabled, since the last check: the page reruns
    through app.py). A no-op until the periodic check is due. (A callback's `saves` checks it before writing.)"""
    return guard.permitted(pages.page(__file__).capability)


def _may_press() -> bool:
    """A key pressed before the candidate was on screen (`ui.ready`) does nothing."""
    return is_ready(WORKSPACE)


@saves(state, "label", capability=Capability.annotate)
def _decide(human_check: int, difficulty_eval: int | None) -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    spent = time.monotonic() - state.get("shown_at", time.monotonic())
    with page_write(engine, user=user) as session:
        queue.decide(
            session,
            annotator_id=user.id,
            candidate_id=view["id"],
            human_check=human_check,
            difficulty_eval=difficulty_eval,
            comment=(st.session_state.get("comment") or "").strip() or None,
            seconds_spent=round(spent, 3),
        )
        _progress.decided(session, candidate_id=view["id"], first_label=view.get("my_label") is None)
        following = None
        if state["mode"] == "review":
            following = queue.next_labelled(session, annotator_id=user.id, after_candidate_id=view["id"])
        if following is not None:
            _show(session, following, "review")
        else:
            _next_from_queue(session)
    name = label_name(human_check, difficulty_eval, view["rewrite_type"])
    state["message"] = f"Saved {escape_markdown(view['data_id'])}: {name}."


@saves(state, "skip", capability=Capability.annotate)
def _skip() -> None:
    view = state["view"]
    if view is None or not _may_press():
        return
    with page_write(engine, user=user) as session:
        if state["mode"] == "review":
            following = queue.next_labelled(session, annotator_id=user.id, after_candidate_id=view["id"])
            if following is not None:
                _show(session, following, "review")
                return
        else:
            queue.release(session, annotator_id=user.id, candidate_id=view["id"])
            state["skipped"].append(view["id"])
        _next_from_queue(session)
    state["message"] = f"Skipped {escape_markdown(view['data_id'])}."


@saves(state, "step back", capability=Capability.annotate)
def _back() -> None:
    view = state["view"]
    if not _may_press():
        return
    with page_write(engine, user=user) as session:
        previous = queue.previous_labelled(
            session, annotator_id=user.id, before_candidate_id=None if view is None else view["id"]
        )
        if previous is None:
            state["message"] = "Nothing before this one."
            return
        _show(session, previous, "review")
    state["message"] = None


@saves(state, "filter change", capability=Capability.annotate)
def _filters_changed() -> None:
    state["skipped"] = []
    with page_write(engine, user=user) as session:
        queue.release(session, annotator_id=user.id)
        _next_from_queue(session)


def _remember_sections() -> None:
    state["shown"] = list(st.session_state.get("annotate_sections") or [])


def _empty_state() -> None:
    with read_session(engine) as session:
        has_candidates = bool(queue.filter_options(session)["data_source"])
    if not has_candidates:
        _filter_options.clear()  # so that the filters list what gets imported next
        st.info("There are no candidates yet. Import some, or load the demo project, from the Overview page.")
        st.page_link(HERE / "overview.py", label="Overview: import and demo project", icon=":material/insights:")
        return
    st.success("Nothing left in your queue" + (" for these filters." if any(_filters().values()) else "."))
    st.page_link(HERE / "browse.py", label="Browse all candidates", icon=":material/table_rows:")
    st.page_link(HERE / "overview.py", label="Overview, import and statistics", icon=":material/insights:")


def _heading(view: dict[str, Any] | None) -> str:
    if not is_ready(WORKSPACE):
        return "Loading the candidate..."
    if view is None:
        return "Nothing to annotate"
    heading = " · ".join(escape_markdown(view[key]) for key in ("data_id", "data_source", "rewrite_type"))
    if view["status"] != "pending":
        heading += f" · {escape_markdown(view['status'])}"
    return heading


@st.fragment
def workspace() -> None:
    """The candidate, the five decision buttons, progress and the comment field.

    A fragment: a keypress reruns only this function, not app.py, the navigation and the sidebar (p50 63
    -> 46 ms per keypress, see BENCHMARKS.md). Kept to few elements, each at the same place on every rerun:
    one heading, one row of buttons (same keys every time, so they are not remounted), two progress bars, one
    status line, the comment, the two questions, one block of fields, and the sections the annotator chose to keep open.
    """
    if not _signed_in():
        st.rerun(scope="app")  # signed out (session expired or account disabled): app.py asks to sign in
    view = state["view"]
    rewrite_type = (view or {}).get("rewrite_type", "")
    st.markdown(f"#### {_heading(view)}")

    with st.container(horizontal=True):
        _view.label_buttons(key_prefix="decide", rewrite_type=rewrite_type, on_decide=_decide, disabled=view is None)
        st.button("Skip", key="skip", shortcut=SKIP_KEY, on_click=_skip, disabled=view is None, width="stretch")
        st.button("Back", key="back", shortcut=BACK_KEY, on_click=_back, width="stretch")

    _progress.show(engine, annotator_id=user.id, filters=_filters())
    status: list[str] = []
    mine = (view or {}).get("my_label")
    if view is not None and state["mode"] == "review" and mine:
        name = label_name(mine["human_check"], mine["difficulty_eval"], rewrite_type)
        status.insert(0, f":orange-badge[You labelled this one {name}. Press a decision key to change it, S to go "
                      "forward.]")
    if state.get("message"):
        status.append(state["message"])
    st.caption(" · ".join(status))

    if not wait_for_buttons(WORKSPACE):
        return
    if view is None:
        if not state["loaded"]:  # the queue could not be read (the database was busy): say so, not "nothing left"
            message = state.get("message") or "Your queue is not loaded yet; reload the page."  # Markdown we built
            st.warning(message)
            return
        _empty_state()
        return
    st.text_input(
        "Comment (optional, saved with the decision)", key="comment", label_visibility="collapsed",
        placeholder="Comment, optional, saved with the decision (Esc, then a key)",
    )
    _view.questions(view)
    st.markdown(_view.details(view))
    # Open sections stay open from one candidate to the next (and across pages, via `state`).
    if "annotate_sections" not in st.session_state:
        st.session_state["annotate_sections"] = state.setdefault("shown", [])
    shown = st.pills(
        "Show", _view.SECTIONS, selection_mode="multi", key="annotate_sections", on_change=_remember_sections,
        label_visibility="collapsed",
    )
    _view.sections(view, shown or ())


if not state["loaded"] or state["view"] is None:
    # With nothing on screen, look again on every run: candidates may have been imported (or released).
    _load()

keyboard()  # Esc leaves the comment, a filter chosen leaves its box: the next key decides
# The candidate first, so that the browser can draw it before the sidebar's filters arrive.
workspace()

options = _filter_options(str(engine.url))
with st.sidebar:
    st.selectbox("Data source", [ALL, *options["data_source"]], key="queue_data_source", on_change=_filters_changed)
    st.selectbox("Rewrite type", [ALL, *options["rewrite_type"]], key="queue_rewrite_type", on_change=_filters_changed)
