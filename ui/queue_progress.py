"""Annotate's progress bars: my queue (done / left for me under the filters) and the project's.

The figures live in session state (`annotator.labelling.queue_progress.QueueProgress`): counted when the page first
draws them, moved by each of this annotator's decisions in the decision's own transaction (`decided`: one
primary-key read, so a keypress costs no count), and counted again when the filters change, after
`RECOUNT_DECISIONS` decisions or `RECOUNT_SECONDS` (what the others did meanwhile).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlalchemy import Engine

from annotator.database.engine import read_session
from annotator.labelling import queue_progress

_KEY = "queue_progress"


def decided(session: Any, *, candidate_id: int, first_label: bool) -> None:
    """After `queue.decide`, in its transaction: move the figures (nothing yet counted: nothing to move)."""
    progress: queue_progress.QueueProgress | None = st.session_state.get(_KEY)
    if progress is not None:
        progress.decided(session, candidate_id=candidate_id, first_label=first_label)


def show(engine: Engine, *, annotator_id: int, filters: dict[str, str | None]) -> None:
    """The two bars, counting afresh first when due."""
    progress: queue_progress.QueueProgress | None = st.session_state.get(_KEY)
    wanted = (filters.get("data_source"), filters.get("rewrite_type"))
    if progress is None or progress.due(filters=wanted):
        with read_session(engine) as session:
            progress = queue_progress.count(session, annotator_id=annotator_id, **filters)
        st.session_state[_KEY] = progress
    mine, project = st.columns(2)
    # Numbers only (int: no data text can reach these Markdown labels).
    mine.progress(value=progress.mine_share, text=f"**My queue:** {int(progress.mine_done)} done · "
                  f"**{int(progress.mine_left)} left** for me")
    project.progress(value=progress.share, text=f"**Project:** {int(progress.done)} of {int(progress.total)} "
                     f"candidates have {int(progress.labels_per_candidate)} label(s)"
                     + ("" if progress.target.count_imported else " besides imported ones"))
