"""Rendering one candidate, shared by the annotate and browse pages.

All problem and model text goes through `ui.markdown.escape_markdown` (escaped Markdown with LaTeX) or
`st.json`: never raw HTML.

The annotate page redraws a candidate on every keypress, and what costs time there is the number of
elements the browser has to draw (see BENCHMARKS.md), so a candidate is few, large Markdown blocks: the
two questions in two bordered columns, and one block with the other fields. The guideline, the solution
and the full model outputs are sections the page shows only when asked (`shown`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import streamlit as st

from ui.diff import side_by_side
from ui.guidelines import guideline_for, umwp_category
from ui.markdown import escape_markdown

GUIDELINE = "Guideline"
SOLUTION = "Solution"
MODEL_OUTPUTS = "Model outputs"
SECTIONS = (GUIDELINE, SOLUTION, MODEL_OUTPUTS)
# A model output this short (and on one line) is shown with the other fields, not only in its section.
SHORT = 80


def text(value: Any) -> str:
    """Any field as safe Markdown: strings with their LaTeX, anything else as its JSON."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return escape_markdown(value) or "—"
    return escape_markdown(json.dumps(value, ensure_ascii=False))


def _short(value: Any) -> str | None:
    """`value` as one short line, or None when it is long or structured (then only its section shows it)."""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str) and len(value) <= SHORT and "\n" not in value:
        return text(value)
    return None


def _checks(view: dict[str, Any]) -> list[Any]:
    return (view.get("extra") or {}).get("checks") or []


def _check_line(check: dict[str, Any]) -> str:
    line = f"**{text(check.get('name'))}:** {text(check.get('verdict'))}"
    if check.get("detail"):
        line += f" — {text(check.get('detail'))}"
    return line


def verdicts(view: dict[str, Any]) -> str:
    """The automatic checks' and the models' verdicts on one line (short values; the rest by name)."""
    parts = []
    for check in _checks(view):
        if isinstance(check, dict) and _short(check.get("verdict")) is not None:
            parts.append(f"{text(check.get('name'))}: {_short(check.get('verdict'))}")
    longer = []
    for key, value in (view.get("llm_outputs") or {}).items():
        short = _short(value)
        if short is None:
            longer.append(text(key))
        else:
            parts.append(f"{text(key)}: {short}")
    if longer:
        parts.append(f"{', '.join(longer)} (in {MODEL_OUTPUTS})")
    return " · ".join(parts)


def details(view: dict[str, Any]) -> str:
    """Ground truth, rewrite type, the changed condition, the reason and the verdicts as one Markdown block."""
    blocks = [
        f"**Ground truth:** {text(view.get('ground_truth'))}",
        f"**Rewrite type:** {text(view.get('rewrite_type'))} · "
        f"**Extracted condition:** {text(view.get('extracted_condition'))}",
        f"**Rewritten condition:** {text(view.get('rewritten_condition'))}",
        f"**Unsolvable reason:** {text(view.get('unsolvable_reason'))}",
    ]
    if summary := verdicts(view):
        blocks.append(f"**Verdicts:** {summary}")
    return "\n\n".join(blocks)


def questions(view: dict[str, Any]) -> None:
    """The original and the rewritten question side by side, the word diff highlighted, LaTeX rendered."""
    old, new, changed = side_by_side(view.get("question"), view.get("rewritten_question"))
    if not changed:
        new += "\n\n:orange-badge[The rewritten question is identical to the original.]"
    left, right = st.columns(2, border=True)
    left.markdown(f"**Original question** · :red-background[removed or changed]\n\n{old or '—'}")
    right.markdown(f"**Rewritten question** · :green-background[added or changed]\n\n{new or '—'}")


def model_outputs(view: dict[str, Any]) -> None:
    """Automatic checks (`extra["checks"]`) and the LLM verification outputs, in full."""
    checks = _checks(view)
    outputs = view.get("llm_outputs") or {}
    if not checks and not outputs:
        st.caption("No automatic checks or model outputs for this candidate.")
        return
    lines: list[str] = []

    def flush() -> None:
        if lines:
            st.markdown("\n\n".join(lines))
            lines.clear()

    for check in checks:
        lines.append(_check_line(check) if isinstance(check, dict) else text(check))
    for key, value in outputs.items():
        if isinstance(value, dict | list):
            lines.append(f"**{text(key)}**")
            flush()
            st.json(value, expanded=1)
        else:
            lines.append(f"**{text(key)}:** {text(value)}")
    flush()


def _section(view: dict[str, Any], title: str) -> None:
    if title == GUIDELINE:
        st.markdown(guideline_for(view.get("rewrite_type") or "", umwp_category=umwp_category(view.get("extra"))))
    elif title == SOLUTION:
        if view.get("solution"):
            st.markdown(text(view["solution"]))
        else:
            st.caption("No solution for this candidate.")
    else:
        model_outputs(view)


def candidate(view: dict[str, Any], *, shown: Collection[str] | None = None) -> None:
    """The candidate as annotators judge it: both questions with the diff, the other fields, the verdicts.

    Args:
        view: A candidate as `annotator.labelling.queue.load` returns it.
        shown: The sections (`SECTIONS`) to draw open, in bordered boxes; None draws them all as expanders
            (the model outputs expanded, the solution and guideline collapsed), as the browse page wants.
    """
    questions(view)
    st.markdown(details(view))
    if shown is not None:
        sections(view, shown)
        return
    if view.get("solution"):
        with st.expander(SOLUTION):
            _section(view, SOLUTION)
    if _checks(view) or view.get("llm_outputs"):
        with st.expander(MODEL_OUTPUTS, expanded=True):
            _section(view, MODEL_OUTPUTS)
    with st.expander(GUIDELINE):
        _section(view, GUIDELINE)


def sections(view: dict[str, Any], shown: Collection[str]) -> None:
    """The sections named in `shown`, open, each in a bordered box, in the order of `SECTIONS`."""
    for title in SECTIONS:
        if title in shown:
            with st.container(border=True):
                _section(view, title)
