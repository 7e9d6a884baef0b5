"""The keyboard on a page driven by keys (Annotate, Review, Adjudicate): one script, installed by `keyboard`.

- `Esc` in a field (the comment, or a select box, open or closed) leaves it, so that the next key is a shortcut
  again (Streamlit keeps the focus there). Leaving a text field is what makes Streamlit take its text (a text input
  commits on blur or Enter), so the comment typed is the one the next decision saves.
- A choice made in a select box (a sidebar filter), by `Enter` or a click, leaves the box too: the next key
  decides instead of being typed into the box's search. So does a toggle switched, by Space or a click (Review's
  blind mode).
- Keys Streamlit keeps for itself, given to a page's buttons: `st.button(shortcut=...)` refuses `C` and `R`,
  which Streamlit's frontend binds (clear cache, rerun) on `document`. A page that needs one for a button
  (`reserved`) gets it: the script listens on `window` in the capture phase, which sees the key before `document`
  does, and clicks the button instead. Where the button is not on the page the key keeps Streamlit's meaning; in a
  field it types. (The queue component, Annotate's and Review's, takes its keys the same way, itself.)

The script is bound once per browser tab and stays across pages (Streamlit's navigation keeps the document), so
the first two act only while the page on screen has called `keyboard` (its marker container is in the page).
The script is a fixed text (no data goes into it); the key map it reads is set from checked names.
"""

from __future__ import annotations

import json
import re

import streamlit as st

MARKER = "annotator_keyboard"
_SCRIPT = """<script>
(() => {
  const keys = Object.assign(window.__annotatorKeys || {}, %s);
  window.__annotatorKeys = keys;
  if (window.__annotatorKeysBound) return;
  window.__annotatorKeysBound = true;
  const here = () => document.querySelector(".st-key-%s") !== null;  // the page on screen is driven by keys
  const typing = (event) => event.composedPath().find((el) => el.tagName &&
    (["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName) || el.isContentEditable));
  const button = (buttonKey) => document.querySelector(".st-key-" + buttonKey + " button");
  const open = (field) => field.getAttribute("aria-expanded") === "true";  // a select box's list is open
  // After the select box has taken the choice (its own handler runs after this capture-phase one).
  const leaveSoon = (field) => setTimeout(() => field.blur(), 0);
  window.addEventListener("keydown", (event) => {
    if (event.repeat || event.ctrlKey || event.metaKey || event.altKey || typeof event.key !== "string") return;
    const field = typing(event);
    if (field && here()) {
      if (event.key === "Escape") {
        // The comment keeps its text and Streamlit takes it; an open select box closes its list first. Either
        // way the field lets go, so that the next key is a key, not typed into the box's search.
        if (open(field)) leaveSoon(field); else field.blur();
        return;
      }
      if (event.key === "Enter" && field.getAttribute("role") === "combobox" && open(field)) {
        leaveSoon(field);
        return;
      }
    }
    const buttonKey = keys[event.key.toLowerCase()];
    if (!buttonKey || field) return;
    const target = button(buttonKey);
    if (!target) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!target.disabled) target.click();
  }, true);
  // A switch turned by Space on it lets go of the focus too.
  window.addEventListener("change", (event) => {
    if (here() && event.target.type === "checkbox") leaveSoon(event.target);
  }, true);
  window.addEventListener("click", (event) => {
    const option = event.target.closest && event.target.closest('[role="option"]');
    const field = document.activeElement;
    if (option && here() && field && field.getAttribute("role") === "combobox") leaveSoon(field);
    // A switch turned by a click on it or its label sends no change event, and focuses itself after the click.
    const box = event.target.closest && event.target.closest("label")?.querySelector('input[type="checkbox"]');
    if (box && here()) leaveSoon(box);
  }, true);
})();
</script>"""
_LETTER = re.compile(r"^[a-z]$")
_BUTTON_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def keyboard(reserved: dict[str, str] | None = None) -> None:
    """Make this page keyboard-driven (see the module's docstring); `reserved` maps a letter to the widget key of
    the button it clicks: a letter Streamlit reserves (e.g. "r"), and its siblings a page wants shown alike.

    Call once per page run, outside fragments; the listener is installed once per browser tab.
    """
    reserved = reserved or {}
    for letter, button_key in reserved.items():
        if not _LETTER.match(letter) or not _BUTTON_KEY.match(button_key):
            raise ValueError(f"not a letter and a widget key: {letter!r} -> {button_key!r}")
    with st.container(key=MARKER):
        st.html(_SCRIPT % (json.dumps(reserved), MARKER), unsafe_allow_javascript=True, width="content")
