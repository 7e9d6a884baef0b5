"""A keyboard workspace whose content shows only once its buttons work in the browser.

Streamlit loads the code for each kind of element the first time one is drawn (React.lazy), so on a freshly
loaded page the candidate's text could be on screen a moment before its buttons exist, and a key pressed in that
moment did nothing, since a shortcut belongs to its button (6 of 16 annotators lost their first key). So the
first run of a browser session draws the buttons and, in place of the content, a "Show" button that a small
script clicks as soon as it is mounted, which is when the other buttons are too (they share that code). The
content comes with the next run; React runs the buttons' effects (where their shortcuts are bound) before it
draws anything new. Keys pressed before that are ignored by the page's callbacks (`is_ready`), since the
annotator has not seen the content yet. The script is fixed text; no data goes into it.
"""

from __future__ import annotations

import json
import re

import streamlit as st

_SCRIPT = """<script>
(() => {
  const selector = %s;
  // A page chosen in the navigation after this script came means the button belongs to the page being left:
  // pressed then, it would ask for a run of that page after the new page's run, and Streamlit would draw that
  // (empty) run over the new page, leaving it blank.
  let leaving = false;
  const leave = (event) => {
    const link = event.type === "click" && event.target.closest?.('a[data-testid$="NavLink"]');
    if (event.type === "popstate" || (link && new URL(link.href).pathname !== location.pathname)) leaving = true;
  };
  document.addEventListener("click", leave, true);
  window.addEventListener("popstate", leave);
  const done = () => {
    document.removeEventListener("click", leave, true);
    window.removeEventListener("popstate", leave);
    return true;
  };
  const press = () => {
    if (leaving) return done();
    const button = document.querySelector(selector);
    if (!button || button.disabled) return false;
    button.click();
    return done();
  };
  if (press()) return;
  // The button may appear disabled (Streamlit disables widgets while it reconnects or a run starts) and be
  // enabled later: watch that attribute too.
  const observer = new MutationObserver(() => { if (press()) observer.disconnect(); });
  observer.observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ["disabled"]});
})();
</script>"""
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _flag(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"not a workspace name: {name!r}")
    return f"{name}_ready"


def is_ready(name: str) -> bool:
    """Whether this browser session has the workspace `name`'s buttons working (see the module's docstring)."""
    return bool(st.session_state.get(_flag(name)))


def _mark_ready(flag: str) -> None:
    st.session_state[flag] = True


def wait_for_buttons(name: str) -> bool:
    """True once the buttons work; until then draws the "Show" button and the script that presses it.

    Call it after drawing the workspace's buttons and before its content; draw the content only on True.
    """
    flag = _flag(name)
    if st.session_state.get(flag):
        return True
    # Without JavaScript, the annotator presses it.
    st.button("Show", key=f"{flag}_button", on_click=_mark_ready, args=(flag,))
    st.html(_SCRIPT % json.dumps(f".st-key-{flag}_button button"), unsafe_allow_javascript=True, width="content")
    return False
