"""Rendering one candidate, shared by the annotate and browse pages.

All problem and model text goes through `annotator.diff.markdown` (escaped Markdown with LaTeX) or
`st.json` / `st.code`: never raw HTML.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from annotator import diff
from annotator.guidelines import guideline_for

LABEL_NAMES = {(1, 0): "unsolvable · simple", (1, 1): "unsolvable · hard", (0, None): "not acceptable"}
DISTRACTOR_LABEL_NAMES = {(1, 0): "acceptable · simple", (1, 1): "acceptable · hard", (0, None): "not acceptable"}


def label_name(human_check: int | None, difficulty_eval: int | None, rewrite_type: str = "") -> str:
    names = DISTRACTOR_LABEL_NAMES if rewrite_type == "distractor" else LABEL_NAMES
    return names.get((human_check, difficulty_eval if human_check == 1 else None), "—")


def text(value: Any) -> str:
    """Any field as safe Markdown: strings with their LaTeX, anything else as its JSON."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return diff.markdown(value) or "—"
    return diff.markdown(json.dumps(value, ensure_ascii=False))


def _field(title: str, value: Any) -> None:
    st.markdown(f"**{title}**")
    st.markdown(text(value))


def _generic(value: Any) -> None:
    if isinstance(value, str):
        st.markdown(text(value))
    elif isinstance(value, dict | list):
        st.json(value, expanded=1)
    else:
        st.markdown(text(value))


def automatic_checks(view: dict[str, Any]) -> None:
    """Automatic checks (`extra["checks"]`) and the LLM verification outputs, whatever is present."""
    checks = (view.get("extra") or {}).get("checks") or []
    outputs = view.get("llm_outputs") or {}
    if not checks and not outputs:
        return
    with st.expander("Automatic checks and model verdicts", expanded=True):
        for check in checks:
            if isinstance(check, dict):
                line = f"**{text(check.get('name'))}:** {text(check.get('verdict'))}"
                if check.get("detail"):
                    line += f" — {text(check.get('detail'))}"
                st.markdown(line)
            else:
                _generic(check)
        for key, value in outputs.items():
            st.markdown(f"**{text(key)}**")
            _generic(value)


def candidate(view: dict[str, Any]) -> None:
    """The candidate as annotators judge it: both questions side by side with the word diff highlighted,
    the answer, the changed condition, the reason, the automatic checks and the guideline."""
    segments = diff.word_diff(view.get("question"), view.get("rewritten_question"))
    left, right = st.columns(2)
    with left:
        st.markdown("**Original question** · :red-background[removed or changed]")
        with st.container(border=True):
            st.markdown(diff.render_old(segments) or "—")
    with right:
        st.markdown("**Rewritten question** · :green-background[added or changed]")
        with st.container(border=True):
            st.markdown(diff.render_new(segments) or "—")
    if not diff.changed(segments):
        st.warning("The rewritten question is identical to the original.")
    info, reason = st.columns(2)
    with info:
        _field("Ground truth", view.get("ground_truth"))
        _field("Extracted condition", view.get("extracted_condition"))
        _field("Rewritten condition", view.get("rewritten_condition"))
    with reason:
        _field("Unsolvable reason", view.get("unsolvable_reason"))
    if view.get("solution"):
        with st.expander("Solution"):
            st.markdown(text(view["solution"]))
    automatic_checks(view)
    with st.expander("Guideline"):
        st.markdown(guideline_for(view.get("rewrite_type") or ""))
