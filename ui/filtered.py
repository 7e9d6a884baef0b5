"""Why a generate run's candidates were filtered: the reasons with their counts, and examples to open.

The counts come from the run's counters (`GenerateProgress.produced`, written with every heartbeat, so they
grow while the run works); an example is read when it is opened. Model text is shown as text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from annotator.construction.pipeline import filtered_examples
from annotator.database.engine import read_session
from annotator.database.models import Run
from ui.markdown import escape_markdown

NONE = "(choose an example)"


def show(engine: Engine, run: Run) -> None:
    """The panel for `run` (nothing when none of its candidates was filtered)."""
    reasons: dict[str, dict] = (run.counters or {}).get("filtered_reasons") or {}
    if not reasons:
        return
    total = sum(int(entry.get("count", 0)) for entry in reasons.values())
    with st.expander(f"Run {run.id}: why {total} candidate(s) were filtered", expanded=True):
        ordered = sorted(reasons.items(), key=lambda item: -int(item[1].get("count", 0)))
        st.dataframe(
            pd.DataFrame([{"reason": reason, "candidates": int(entry.get("count", 0)),
                           "examples": ", ".join(entry.get("examples") or [])} for reason, entry in ordered]),
            hide_index=True, width="stretch",
        )
        examples = [data_id for _, entry in ordered for data_id in entry.get("examples") or []]
        chosen = st.selectbox("Open an example", [NONE, *examples], key=f"filtered_example_{run.id}")
        if chosen == NONE:
            return
        with read_session(engine) as session:
            found = filtered_examples(session, data_ids=[chosen])
        if not found:
            st.info("That candidate is no longer filtered (a later run or an import changed it).")
            return
        example = found[0]
        st.markdown(f"**{escape_markdown(example['data_id'])}**: {escape_markdown(example['filtered_because'])}")
        st.markdown(f"**Rewritten question:** {escape_markdown(example['rewritten_question'] or '(none)')}")
        for step, answer in example["answers"].items():
            st.caption(f"The model's answer at {escape_markdown(step)}")
            st.text(answer)
