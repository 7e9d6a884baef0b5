"""Adjudicate: candidates whose labels disagree, lowest agreement first, settled with Annotate's keys; and the
audit sample, re-checked with keys. Both queues are held in the browser, shown at once.

Disputes: every annotator's label and comment is beside the candidate, and every reviewer's decision on it with
its comment. `1` unsolvable and simple, `2` unsolvable and hard, `0` not acceptable, `S` skip, `B` back, `C` the
comment (`Esc` leaves it). The decision wins over the labels and is an event in the history. When another reviewer
decided the dispute since it was shown, the page says who and how, shows their decision and comment, and the same
key pressed again overrides their decision (theirs stays in the history, on Browse).

Audit sample (the sidebar's queue): the candidates drawn from the vetted set (`python -m annotator audit draw`),
shown without their labels, so that the re-check is the reviewer's own: `1` truly unsolvable, `0` not, `S` skip.

The browser holds the candidate on screen and the next ones, each claimed for this reviewer (at most two reviewers
hold one; `annotator.labelling.browser_adjudication`); a key shows the next one at once and its decision goes to
the server in the background, stored once however many times it arrives.
"""

import time
from typing import Any

import streamlit as st

from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.labelling import audit
from annotator.labelling import browser_adjudication as queues
from annotator.labelling.browser_queue import AHEAD, FIRST, STEP
from ui import guard, pages
from ui.adjudicate_items import AUDIT_PAGE, DISPUTES_PAGE, audit_item, dispute_item
from ui.components import queue as queue_component
from ui.keys import keyboard
from ui.writes import page_write, saves

DISPUTES, AUDIT = "Disputes", "Audit sample"
QUEUE = {DISPUTES: queues.DISPUTES, AUDIT: queues.AUDIT}
engine, user = guard.require_page(__file__)
state: dict[str, Any] = st.session_state.setdefault("adjudicate", {})
state.setdefault("queue_name", DISPUTES)


def _queue() -> str:
    return QUEUE[state["queue_name"]]


def _mine() -> dict[str, Any]:
    """This queue's part of the page's state."""
    return state.setdefault(_queue(), {"skipped": [], "items": {}, "held": [], "outcomes": {}, "meanwhile": [],
                                       "message": None, "loaded": False, "left": queues.Left()})


def _component() -> str:
    return f"adjudicate_{_queue()}_queue"


def _store() -> str:
    """The browser's queue (and its storage) of this person and queue."""
    return queue_component.store_name(user_id=user.id, queue=_queue())


def _overridable(mine: dict[str, Any]) -> list[str]:
    """The decisions refused because another reviewer decided meanwhile: the same key again overrides."""
    return [decision_id for decision_id, outcome in mine["outcomes"].items() if queues.MEANWHILE in outcome]


def _build(session: Any, candidate_id: int) -> dict[str, Any] | None:
    if _queue() == queues.AUDIT:
        return audit_item(session, candidate_id=candidate_id, reviewer_id=user.id)
    return dispute_item(session, candidate_id=candidate_id, reviewer_id=user.id, reviewer=user.name)


def _views(session: Any, ids: list[int], fresh: list[int]) -> None:
    """The candidates `ids` as the component shows them, built once each (kept while held); `fresh` ones (another
    reviewer's decision met this one's) built again, with it."""
    built: dict[int, Any] = _mine()["items"]
    for candidate_id in [*ids, *fresh]:
        if candidate_id not in built or candidate_id in fresh:
            made = _build(session, candidate_id)
            if made is not None:
                built[candidate_id] = made
    for candidate_id in [known for known in built if known not in ids and known not in fresh]:
        del built[candidate_id]


def _store_sent(session: Any) -> tuple[queues.Stored, set[int]]:
    """Store what the browser sent of this queue; the stored, and the candidates its decisions were on."""
    mine, queue = _mine(), _queue()
    sent = queues.parse(queue_component.sent_decisions(_component()), queue=queue)
    stored = queues.store(session, reviewer_id=user.id, queue=queue, sent=sent)
    skipped = [entry.candidate_id for entry in sent if not isinstance(entry, str) and entry.skip]
    mine["skipped"] = list(dict.fromkeys([*mine["skipped"], *skipped]))
    return stored, {entry.candidate_id for entry in sent if not isinstance(entry, str)}


def _sync() -> None:
    """Store what the browser sent, then claim the next candidates: one transaction."""
    mine, queue = _mine(), _queue()
    with page_write(engine, user=user) as session:
        stored, waiting = _store_sent(session)
        full = AHEAD + 1
        size = FIRST if not mine["loaded"] else min(full, len(mine["held"]) + STEP)
        held = queues.fill(session, reviewer_id=user.id, queue=queue, exclude=[*mine["skipped"], *waiting],
                           size=size)
    with read_session(engine) as session:  # after the write: its lock is not held while the items are built
        mine["left"].after(session, queue=queue, decided=len(stored.decided), held=len(held))
        _views(session, held, stored.meanwhile)
        drawn = queue != queues.AUDIT or audit.current_sample(session) is not None
    mine.update(outcomes=stored.outcomes, held=held, message=None, loaded=True, more=len(held) == size < full,
                meanwhile=stored.meanwhile, drawn=drawn)


def _store_left() -> None:
    """The queue left (another chosen): what its browser queue sent is stored now. (Its answers come when it is
    shown again: the browser keeps its decisions until then and sends them again, stored once.)"""
    with page_write(engine, user=user) as session:
        _store_sent(session)


_BUSY = "The database is busy: your decisions wait in the browser and are sent again in a moment."


@saves(state, "decisions", capability=Capability.adjudicate, busy=_BUSY)
def _sync_disputes() -> None:
    _sync()


@saves(state, "audit decisions", capability=Capability.audit, busy=_BUSY)
def _sync_audit() -> None:
    _sync()


@saves(state, "decisions", capability=Capability.adjudicate, busy=_BUSY)
def _left_disputes() -> None:
    _store_left()


@saves(state, "audit decisions", capability=Capability.audit, busy=_BUSY)
def _left_audit() -> None:
    _store_left()


def _back() -> None:
    """The dispute this reviewer decided before the ones the browser holds (read only)."""
    mine = _mine()
    before = queue_component.back_request(_component())
    with read_session(engine) as session:
        previous = queues.previous_decided(session, reviewer_id=user.id, before=before)
        made = None if previous is None else _build(session, previous)
    mine["previous"] = made
    if made is None:
        mine["back_message"] = "Nothing before this one."


def _switch() -> None:
    """Another queue chosen: the decisions sent from the one left are stored, the other's candidates come with
    this run."""
    (_left_audit if _queue() == queues.AUDIT else _left_disputes)()
    state["queue_name"] = st.session_state["adjudicate_queue"]
    _mine()["left"].recount()


def _empty_text(mine: dict[str, Any]) -> str:
    if _queue() == queues.DISPUTES:
        return "No disputed candidates left" + (" (some skipped this session)." if mine["skipped"] else ".")
    if not mine.get("drawn"):
        return ("No audit sample is drawn yet: a reviewer or an admin draws one from the vetted candidates with "
                "`python -m annotator audit draw --size N --seed S --by NAME`.")
    return "Nothing left to audit" + (" (some skipped this session)." if mine["skipped"] else ".")


def _data(mine: dict[str, Any]) -> dict[str, Any]:
    held, have = mine["held"], queue_component.held_by_browser(_component())
    # Items another reviewer's decision met: sent again, with it, though the browser has them.
    fresh = [candidate_id for candidate_id in mine["meanwhile"] if candidate_id in mine["items"]]
    counted = f"{'Left to audit' if _queue() == queues.AUDIT else 'Disputes left'}: {mine['left'].count}"
    message = mine.pop("back_message", None) or mine.get("message") or ("" if mine["loaded"] else
                                                                         "Your queue is not loaded yet.")
    return {
        "store": _store(),
        "now": time.time() * 1000,
        "generation": 0,
        "page": AUDIT_PAGE if _queue() == queues.AUDIT else DISPUTES_PAGE,
        "order": [candidate_id for candidate_id in held if candidate_id in mine["items"]],
        "items": [mine["items"][candidate_id] for candidate_id in dict.fromkeys([*fresh, *held])
                  if candidate_id in mine["items"] and (candidate_id not in have or candidate_id in fresh)],
        "previous": mine.pop("previous", None),
        "message": " · ".join(part for part in (counted, message) if part),
        "empty": _empty_text(mine) if not held and mine["loaded"] else "",
        "again": "now" if mine.pop("more", False) else ("" if mine["loaded"] and not mine.get("message") else "soon"),
    }


@st.fragment
def workspace() -> None:
    """The queue component. A fragment: a decision reruns only this function."""
    seen = queue_component.sent_decisions(_component()) is not None
    (_sync_audit if _queue() == queues.AUDIT else _sync_disputes)()
    if not guard.permitted(pages.page(__file__).capability):
        st.rerun(scope="app")  # signed out (session expired or account disabled): app.py asks to sign in
    mine = _mine()
    if state.get("message"):  # a busy database, said by `saves`
        mine["message"] = state.pop("message")
    queue_component.acknowledge(key=_component(), store=_store(), outcomes=mine["outcomes"],
                                overridable=_overridable(mine))
    result = queue_component.mount(key=_component(), data=_data(mine), on_back=_back)
    if not seen and (getattr(result, "sent", None) or {}).get("decisions"):
        st.rerun()  # the browser's state arrives once the component is on the page: store what it sent


# The queue chosen is kept with the page's state: Streamlit forgets a widget's value when another page is shown.
st.sidebar.selectbox("Queue", (DISPUTES, AUDIT), index=(DISPUTES, AUDIT).index(state["queue_name"]),
                     key="adjudicate_queue", on_change=_switch)
st.sidebar.caption("Disputes: labels that disagree. Audit sample: vetted candidates drawn to re-check.")
with st.sidebar:
    queue_component.wake(key="adjudicate_wake")
keyboard()  # Esc leaves a field, a queue chosen leaves its box: the next key decides
workspace()
