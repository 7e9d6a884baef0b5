"""Keys Streamlit keeps for itself, given to a page's buttons.

Pages take their keys from `st.button(shortcut=...)`, which refuses `C` and `R`: Streamlit's frontend
binds them (clear cache, rerun) on `document`. The Review page needs `R` (refused), so this script listens
on `window` in the capture phase, which sees the key before `document` does, and clicks the button instead.
Where the button is not on the page the key keeps Streamlit's meaning; in a text field it types as usual,
and `Esc` leaves the field (Streamlit keeps the focus there), so that the next key is a shortcut again.
The script is a fixed text (no data goes into it); the key map it reads is set from checked names.
"""

from __future__ import annotations

import json
import re

import streamlit as st

_SCRIPT = """<script>
(() => {
  const keys = Object.assign(window.__annotatorKeys || {}, %s);
  window.__annotatorKeys = keys;
  if (window.__annotatorKeysBound) return;
  window.__annotatorKeysBound = true;
  const typing = (event) => event.composedPath().find((el) => el.tagName &&
    (["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName) || el.isContentEditable));
  const button = (buttonKey) => document.querySelector(".st-key-" + buttonKey + " button");
  window.addEventListener("keydown", (event) => {
    if (event.repeat || event.ctrlKey || event.metaKey || event.altKey || typeof event.key !== "string") return;
    const field = typing(event);
    if (event.key === "Escape" && field && Object.values(keys).some(button)) {
      field.blur();  // Esc leaves the comment field (which keeps its text), so that the next key is a key
      return;
    }
    const buttonKey = keys[event.key.toLowerCase()];
    if (!buttonKey || field) return;
    const target = button(buttonKey);
    if (!target) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!target.disabled) target.click();
  }, true);
})();
</script>"""
_LETTER = re.compile(r"^[a-z]$")
_BUTTON_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def reserved_key_buttons(keys: dict[str, str]) -> None:
    """Let each key in `keys` (a letter Streamlit reserves, e.g. "r") click the button with that widget key.

    Call once per page run, outside fragments; the listener is installed once per browser tab.
    """
    for letter, button_key in keys.items():
        if not _LETTER.match(letter) or not _BUTTON_KEY.match(button_key):
            raise ValueError(f"not a letter and a widget key: {letter!r} -> {button_key!r}")
    st.html(_SCRIPT % json.dumps(keys), unsafe_allow_javascript=True, width="content")
