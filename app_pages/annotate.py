"""Annotate: the next candidate in my queue, decided with one key, shown at once.

`1` unsolvable and simple, `2` unsolvable and hard, `0` not acceptable, `S` skip, `B` back, `C` the comment (`Esc`
leaves it). The browser holds the candidate on screen and the next ones, claimed for this annotator and already
drawn (`ui.components.queue`): a key shows the next one in the same frame and its decision goes to the server in
the background, stored once whatever number of times it arrives (`annotator.labelling.browser_queue`). Each run of
the workspace fragment stores what the browser sent, claims the next candidates and hands both back.
"""

import time
from pathlib import Path
from typing import Any

import streamlit as st

from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.labelling import browser_queue, queue
from ui import guard, pages, queue_items
from ui import queue_progress as _progress
from ui.components import queue as queue_component
from ui.keys import keyboard
from ui.queue_items import item
from ui.writes import page_write, saves

COMPONENT = "annotate_queue"
ALL = "(all)"
FILTERS = ("data_source", "rewrite_type")
HERE = Path(__file__).resolve().parent

engine, user = guard.require_page(__file__)
STORE = queue_component.store_name(user_id=user.id, queue="annotate")
state: dict[str, Any] = st.session_state.setdefault(
    "annotate", {"generation": 0, "skipped": [], "items": {}, "held": [], "outcomes": {}, "previous": None,
                 "message": None, "loaded": False},
)


@st.cache_data(ttl=60, show_spinner=False)
def _filter_options(url: str) -> dict[str, list[str]]:
    with read_session(engine) as session:
        return queue.filter_options(session)


def _filters() -> dict[str, str | None]:
    chosen = {name: st.session_state.get(f"queue_{name}", st.query_params.get(name, ALL)) for name in FILTERS}
    return {name: None if value == ALL else value for name, value in chosen.items()}


def _signed_in() -> bool:
    """Whether the sign-in still holds (see `guard.permitted`); a no-op until the periodic check is due."""
    return guard.permitted(pages.page(__file__).capability)


def _views(session: Any, ids: list[int]) -> None:
    """The candidates `ids` as the component shows them, built once each (kept while held)."""
    built: dict[int, Any] = state["items"]
    for candidate_id in ids:
        if candidate_id not in built:
            view = queue.load(session, candidate_id=candidate_id, annotator_id=user.id)
            if view is not None:
                built[candidate_id] = item(view)
    for candidate_id in [known for known in built if known not in ids]:
        del built[candidate_id]


@saves(state, "labels", capability=Capability.annotate,
       busy="The database is busy: your decisions wait in the browser and are sent again in a moment.")
def _sync() -> None:
    """Store what the browser sent, then claim the next candidates: one transaction."""
    sent = browser_queue.parse(queue_component.sent_decisions(COMPONENT))
    waiting = {entry.candidate_id for entry in sent if not isinstance(entry, str)}
    with page_write(engine, user=user) as session:
        stored = browser_queue.store(session, annotator_id=user.id, sent=sent)
        for candidate_id, first in stored.labelled:
            _progress.decided(session, candidate_id=candidate_id, first_label=first)
        skipped = [entry.candidate_id for entry in sent if not isinstance(entry, str) and entry.skip]
        state["skipped"] = list(dict.fromkeys([*state["skipped"], *skipped]))
        # A first look claims a few, each later one a few more (quick transactions, even when a team signs in at
        # once): the browser asks again until it holds them all.
        full = browser_queue.AHEAD + 1
        size = browser_queue.FIRST if not state["loaded"] else min(full, len(state["held"]) + browser_queue.STEP)
        held = browser_queue.fill(session, annotator_id=user.id, exclude=[*state["skipped"], *waiting], size=size,
                                  **_filters())
    with read_session(engine) as session:  # after the write: its lock is not held while the items are built
        _views(session, held)
    state.update(outcomes=stored.outcomes, held=held, message=None, loaded=True, more=len(held) == size < full)


def _back() -> None:
    """The label before the ones the browser holds (read only)."""
    before = queue_component.back_request(COMPONENT)
    with read_session(engine) as session:
        previous = queue.previous_labelled(session, annotator_id=user.id, before_candidate_id=before)
        view = None if previous is None else queue.load(session, candidate_id=previous, annotator_id=user.id)
    state["previous"] = None if view is None else item(view)
    if view is None:
        state["back_message"] = "Nothing before this one."


@saves(state, "filter change", capability=Capability.annotate)
def _filters_changed() -> None:
    for name in FILTERS:
        value = st.session_state.get(f"queue_{name}", ALL)
        if value == ALL:
            st.query_params.pop(name, None)
        else:
            st.query_params[name] = value
    state["skipped"], state["generation"] = [], state["generation"] + 1
    with page_write(engine, user=user) as session:
        queue.release(session, annotator_id=user.id)


def _empty_text() -> str:
    with read_session(engine) as session:
        has_candidates = bool(queue.filter_options(session)["data_source"])
    if not has_candidates:
        _filter_options.clear()  # so that the filters list what gets imported next
        return "There are no candidates yet. Import some, or load the demo project, from the Overview page."
    return "Nothing left in your queue" + (" for these filters." if any(_filters().values()) else ".")


@st.fragment
def workspace() -> None:
    """The queue component and the progress bars. A fragment: a decision reruns only this function."""
    seen = queue_component.sent_decisions(COMPONENT) is not None
    _sync()
    if not _signed_in():
        st.rerun(scope="app")  # signed out (session expired or account disabled): app.py asks to sign in
    queue_component.acknowledge(key=COMPONENT, store=STORE, outcomes=state["outcomes"])
    held = state["held"]
    have = queue_component.held_by_browser(COMPONENT)
    data = {
        "store": STORE,
        "page": queue_items.ANNOTATE,
        "now": time.time() * 1000,  # the browser measures its clock's offset from the server's
        "generation": state["generation"],
        "order": [candidate_id for candidate_id in held if candidate_id in state["items"]],
        "items": [state["items"][candidate_id] for candidate_id in held
                  if candidate_id in state["items"] and candidate_id not in have],
        "previous": state.pop("previous", None),
        "message": state.pop("back_message", None) or state.get("message") or (
            "" if state["loaded"] else "Your queue is not loaded yet."),
        "empty": _empty_text() if not held and state["loaded"] else "",
        # Ask again at once (more to claim), or in a moment (the database was busy: nothing was read).
        "again": "now" if state.pop("more", False) else ("" if state["loaded"] and not state.get("message") else
                                                           "soon"),
    }
    result = queue_component.mount(key=COMPONENT, data=data, on_back=_back)
    if not seen and (getattr(result, "sent", None) or {}).get("decisions"):
        # A session's first run reads the browser's state only once the component is on the page (a new app
        # server, a reload): once more, to store what it sent.
        st.rerun()
    _progress.show(engine, annotator_id=user.id, filters=_filters())
    if not held:
        st.page_link(HERE / "browse.py", label="Browse all candidates", icon=":material/table_rows:")
        st.page_link(HERE / "overview.py", label="Overview, import and statistics", icon=":material/insights:")


keyboard()  # Esc leaves a field, a filter chosen leaves its box: the next key decides
workspace()

options = _filter_options(str(engine.url))
with st.sidebar:
    queue_component.wake(key="annotate_wake")
    for name, label in zip(FILTERS, ("Data source", "Rewrite type"), strict=True):
        choices = [ALL, *options[name]]
        if f"queue_{name}" not in st.session_state:  # a reload keeps the filters (they are in the address)
            remembered = st.query_params.get(name, ALL)
            st.session_state[f"queue_{name}"] = remembered if remembered in choices else ALL
        st.selectbox(label, choices, key=f"queue_{name}", on_change=_filters_changed)
