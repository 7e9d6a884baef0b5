"""The queue held in the browser: the item on screen and the next ones already drawn, keys answered at once,
decisions sent to the server in the background until it has answered each one (`queue.js`, `queue.css`).

How a decision travels (through Streamlit itself, so `streamlit run app.py` and `server.py` behave alike):

- A key decides in the browser: the next item shows at once, and the decision (an id made there by
  `crypto.randomUUID`, the item, the label, the comment, the key's time) joins the list of decisions not yet
  answered. That whole list is the component's state value `sent`; setting it reruns the page's fragment. The
  list is also kept in the browser's storage (per person and page), so a reload sends it again.
- The page stores each decision of the list once (`annotator.labelling.browser_queue.store`: an id seen before
  is answered with its first outcome) and hands back the outcome of every decision of the list at once, in a
  hidden second instance drawn before the queue (`acknowledge`), so that the answer does not wait for the rest
  of the run; then, in the queue's data, the order of the items now held and those of them the browser does not
  have yet (it says which it has with each message). The browser drops the answered decisions, and shows a
  refusal with its item.
  Since every message carries the whole list, a run Streamlit skips or cuts short (keys faster than runs)
  loses nothing: the next run answers all. A decision with no answer after a few seconds is sent again.
- `back` (a trigger) asks for the label before the ones the browser holds.
- Decisions still unanswered after a while (the app server was started again: the new one does not know the old
  one's fragment, whose runs it ignores) make the browser ask for a run of the whole app through a second, empty
  instance outside the fragment (`wake`).
- Nothing on screen, nothing waiting for an answer, and the server has not said the queue is empty: an answer with
  the next items went missing, and the browser asks again.
- Streamlit sometimes takes the element away and draws it anew (seconds apart under load). A key pressed meanwhile
  is kept, and decides the item that was on screen if that item is on screen again when the queue is back.

Nothing from the data is set as HTML in the browser: text as text, math as MathML rebuilt there element by
element from `ui.rich_text`'s sanitized markup.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import streamlit as st

_HERE = Path(__file__).resolve().parent
_COMPONENT = st.components.v2.component(
    "annotator_queue",
    js=(_HERE / "queue.js").read_text(encoding="utf-8"),
    css=(_HERE / "queue.css").read_text(encoding="utf-8"),
    isolate_styles=False,  # in the page's document: the page's keyboard script and the browser tests see it
)


def _nothing() -> None:
    """The state's change callback: the page's fragment reads the state itself on every run."""


def mount(*, key: str, data: dict[str, Any], on_back: Callable[[], None],
          on_restart: Callable[[], None] | None = None) -> Any:
    """Draw the queue with `data` (see `queue.js`'s `update`); `on_back` runs when the browser asks for the label
    before the ones it holds (read `back_request(key)`), `on_restart` when Review's reviewer asks for the queue
    from its top again."""
    more = {} if on_restart is None else {"on_restart_change": on_restart}
    return _COMPONENT(key=key, data=data, default={"sent": None}, on_sent_change=_nothing, on_back_change=on_back,
                      **more)


def store_name(*, user_id: int, queue: str) -> str:
    """The name of one person's queue of one page in the browser (it names the queue's storage there too)."""
    return f"annotator-queue:{user_id}:{queue}"


def acknowledge(*, key: str, store: str, outcomes: dict[str, str], overridable: Collection[str] = ()) -> None:
    """Send the outcomes of the decisions just stored ahead of the rest of the run (the items the page builds and
    sends after them): a hidden second instance beside the queue `key` of the browser's queue `store`, drawn where
    the page calls this, so that an answer does not wait for the next items."""
    _COMPONENT(key=f"{key}-ack", data={"ack": True, "store": store, "outcomes": outcomes,
                                        "overridable": list(overridable), "now": time.time() * 1000})


def wake(*, key: str) -> None:
    """The page's way to a run of the whole app, outside the queue's fragment: the queue asks for one when its
    decisions go unanswered (a new app server knows nothing of the old one's fragments). Call outside fragments."""
    _COMPONENT(key=key, data={"wake": True}, on_wake_change=_nothing, height=0)


def sent_decisions(key: str) -> Any:
    """The decisions the browser has not had an answer for (its state value), as JSON values."""
    value = st.session_state.get(key) or {}
    sent = value.get("sent") if hasattr(value, "get") else None
    return sent.get("decisions") if isinstance(sent, dict) else None


def held_by_browser(key: str) -> set[int]:
    """The items the browser said it has (with its last decisions sent): the page sends it only the others."""
    value = st.session_state.get(key) or {}
    sent = value.get("sent") if hasattr(value, "get") else None
    have = sent.get("have") if isinstance(sent, dict) else None
    return {i for i in have if isinstance(i, int) and not isinstance(i, bool)} if isinstance(have, list) else set()


def back_request(key: str) -> int | None:
    """The item the browser wants the label before (the trigger `back`), None for the latest."""
    value = st.session_state.get(key) or {}
    back = value.get("back") if hasattr(value, "get") else None
    before = back.get("before") if isinstance(back, dict) else None
    return before if isinstance(before, int) and not isinstance(before, bool) else None
