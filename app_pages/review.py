"""Review: model transcripts one by one, the judge's verdict confirmed or overridden with one key, shown at once.

`S` successful, `R` refused, `F` failed, `Enter` agrees with the judge, `1`..`9` toggle the hallucination tags,
`M` shows the response's math as written (again: typeset), `B` back, `N` next without reviewing, `C` the comment
(`Esc` leaves it). The browser holds the transcript on screen and the ones around it in the review queue's order
(`ui.components.queue`), already drawn with their math typeset: a key shows the next one in the same frame and the
review goes to the server in the background, stored once whatever number of times it arrives
(`annotator.transcripts.review.browser_review`). Each run of the workspace fragment stores what the browser sent and
hands back the transcripts around the one it is on. The queue (verdicts that differ from the reference rule, judge
unsure, a sample of the rest; unreviewed first) is opened when the page opens or a filter changes and read a page
at a time as the reviewer goes (`transcripts.ReviewQueue`).
"""

import time
from typing import Any
from uuid import uuid4

import streamlit as st

from annotator import transcripts
from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.transcripts.review import browser_review
from ui import guard, pages, review_items
from ui.components import queue as queue_component
from ui.keys import keyboard
from ui.markdown import escape_markdown
from ui.writes import page_write, saves

COMPONENT = "review_queue"
ALL = "(all)"

engine, user = guard.require_page(__file__)
STORE = queue_component.store_name(user_id=user.id, queue="review")
state: dict[str, Any] = st.session_state.setdefault(
    "review", {"walk": None, "generation": 0, "position": 0, "items": {}, "stale": set(), "outcomes": {},
               "message": None}
)


def _filters() -> dict[str, str | None]:
    model = st.session_state.get("review_model", ALL)
    prompt = st.session_state.get("review_prompt", ALL)
    tag = st.session_state.get("review_tag", ALL)  # also set by the Report page's tags chart
    return {"model": None if model == ALL else model, "prompt": None if prompt == ALL else prompt,
            "tag": None if tag == ALL else tag}


def _blind() -> bool:
    return bool(st.session_state.get("review_blind"))


def _load() -> None:
    """Open the queue under the filters: the browser starts again at its top."""
    with read_session(engine) as session:
        # Seeded by the reviewer, so that two reviewers' samples differ but each one's is stable.
        state["walk"] = transcripts.ReviewQueue.open(session, seed=user.id, **_filters())
        state["tag_list"] = transcripts.get_tags(session)
    state.update(position=0, items={}, stale=set(), generation=uuid4().hex[:12])


def _blind_changed() -> None:
    """The transcripts held are built again, with or without the model and the judge; the place is kept."""
    state.update(items={}, stale=set(), generation=uuid4().hex[:12])


def _sent() -> dict[str, Any]:
    value = st.session_state.get(COMPONENT) or {}
    sent = value.get("sent") if hasattr(value, "get") else None
    return sent if isinstance(sent, dict) else {}


def _browser_position() -> None:
    """Where the browser is in the walk, as its last message said (a message of an earlier walk says nothing)."""
    sent = _sent()
    if sent.get("generation") != state["generation"]:
        return
    position = sent.get("position")
    if isinstance(position, int) and not isinstance(position, bool) and 0 <= position <= len(state["walk"]):
        state["position"] = position


@saves(state, "reviews", capability=Capability.review,
       busy="The database is busy: your reviews wait in the browser and are sent again in a moment.")
def _store() -> None:
    """Store the reviews the browser sent (one transaction)."""
    raw = queue_component.sent_decisions(COMPONENT)
    sent = browser_review.parse(raw)
    state["outcomes"], state["message"] = {}, None
    if not sent:
        return
    with page_write(engine, user=user) as session:
        stored = browser_review.store(session, annotator_id=user.id, sent=sent)
    state["outcomes"] = stored.outcomes
    state["stale"].update(stored.reviewed)  # built again, with this review, if the browser has to be sent it
    if any(isinstance(entry, dict) and entry.get("item") in stored.reviewed and entry.get("walk") != state["generation"]
           for entry in raw):
        # Reviews made on another walk (before a reload, or on a server started again) were stored only now: the
        # queue opened again puts them after the ones still to review, where the reviewer goes on.
        _load()


def _window(have: set[int]) -> browser_review.Window:
    """The transcripts around the browser's place, each built once (kept while held); one reviewed since it was
    built is built again only when the browser does not have it (its review is in the browser's)."""
    built: dict[int, Any] = state["items"]
    stale: set[int] = state.setdefault("stale", set())
    with read_session(engine) as session:
        window = browser_review.window(session, state["walk"], position=state["position"])
        for transcript_id in window.ids:
            if transcript_id not in built or (transcript_id in stale and transcript_id not in have):
                view = transcripts.load_review(session, transcript_id=transcript_id)
                stale.discard(transcript_id)
                if view is not None:
                    built[transcript_id] = review_items.item(view, blind=_blind())
    for transcript_id in [known for known in built if known not in window.ids]:
        del built[transcript_id]
        stale.discard(transcript_id)
    return window


def _restart() -> None:
    _load()


def _empty_text() -> str:
    if not len(state["walk"]):
        return "There are no transcripts for these filters yet."
    return "You are at the end of the queue."


@st.fragment
def workspace() -> None:
    """The queue component. A fragment: a review reruns only this function."""
    seen = queue_component.sent_decisions(COMPONENT) is not None
    _browser_position()
    _store()
    if not guard.permitted(pages.page(__file__).capability):
        st.rerun(scope="app")  # signed out or no longer a reviewer: app.py and the guard take over
    queue_component.acknowledge(key=COMPONENT, store=STORE, outcomes=state["outcomes"])
    # The browser drops all it holds when the walk changes (the filters, blind mode, the queue opened again, a new
    # app server): what it said it has counts only when said on this walk.
    have = queue_component.held_by_browser(COMPONENT) if _sent().get("generation") == state["generation"] else set()
    window = _window(have)
    data = {
        "page": review_items.REVIEW,
        "store": STORE,
        "now": time.time() * 1000,  # the browser measures its clock's offset from the server's
        "generation": state["generation"],
        "position": state["position"],
        "walk": {"start": window.start, "ids": [i for i in window.ids if i in state["items"]], "end": window.end,
                 "size": len(state["walk"])},
        "items": [state["items"][i] for i in window.ids if i in state["items"] and i not in have],
        "tags": state.get("tag_list") or [],
        "blind": _blind(),
        "message": state.get("message") or "",
        "empty": _empty_text(),
        "again": "soon" if state.get("message") else "",  # the database was busy: nothing was stored
    }
    result = queue_component.mount(key=COMPONENT, data=data, on_back=_nothing, on_restart=_restart)
    if not seen and (getattr(result, "sent", None) or {}).get("decisions"):
        # A session's first run reads the browser's state only once the component is on the page (a new app
        # server, a reload): once more, to store what it sent.
        st.rerun()


def _nothing() -> None:
    """Review's B goes back within what the browser holds, which reaches as far back as the walk."""


@saves(state, "tag list", capability=Capability.review)
def _save_tags() -> None:
    lines = (st.session_state.get("review_tag_text") or "").splitlines()
    try:
        with page_write(engine, user=user) as session:
            state["tag_list"] = transcripts.set_tags(session, tags=[line for line in lines if line.strip()])
    except transcripts.ReviewError as exc:
        state["tag_message"] = str(exc)
        return
    state["tag_message"] = None


if state["walk"] is None:
    _load()
keyboard()  # Esc leaves a field, a filter chosen leaves its box: the next key decides
workspace()

with read_session(engine) as _session:
    options = transcripts.review_options(_session)
with st.sidebar:
    queue_component.wake(key="review_wake")
    st.selectbox("Model", [ALL, *options["model"]], key="review_model", on_change=_load)
    st.selectbox("Prompt", [ALL, *options["prompt"]], key="review_prompt", on_change=_load)
    chosen_tag = _filters()["tag"]  # a tag no longer in the list stays choosable while chosen
    tag_options = dict.fromkeys([*(state.get("tag_list") or []), *([chosen_tag] if chosen_tag else [])])
    st.selectbox("Tag", [ALL, *tag_options], key="review_tag", on_change=_load)
    st.toggle("Blind mode (hide the model and the judge)", key="review_blind", on_change=_blind_changed)
    st.caption("Keys: S R F, Enter agrees with the judge, 1..9 tags, N next, B back, C comment. Math is typeset in "
               "every response and its reasoning. M shows the math of the response on screen as the model wrote it, "
               "M again typesets it; the next transcript comes typeset.")
    with st.expander("Tags (keys 1..9)"):
        st.session_state.setdefault("review_tag_text", "\n".join(state.get("tag_list") or []))
        st.text_area("One tag per line", key="review_tag_text")
        st.button("Save tags", key="save_tags", on_click=_save_tags)
        if state.get("tag_message"):
            st.error(escape_markdown(state["tag_message"]))  # it may quote a tag
