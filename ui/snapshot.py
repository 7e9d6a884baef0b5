"""The age of the slow pages' shared figures on the page (`annotator.figures.snapshots`: stored in the database for
every app server, recomputed by one of them once stale): a ticking caption and a Recompute now button."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from sqlalchemy import Engine

from annotator.figures.child import ChildFailed
from annotator.figures.pages import OVERVIEW
from annotator.figures.snapshots import Reading, Snapshot
from ui.markdown import escape_markdown

OVERVIEW_TTL_SECONDS = 30
# How long a look waits for figures being recomputed: a small project's take milliseconds, so a label just saved
# shows on the next look; a big project's take longer, and the page shows the last ones meanwhile (its
# ticking caption says new ones are coming and reruns the page when they are stored). Under the 0.5 s a page has.
OVERVIEW_PATIENCE_SECONDS = 0.4


def overview_snapshot(engine: Engine) -> Snapshot:
    """The Overview's figures (`annotator.figures.pages.OVERVIEW`), one `Snapshot` per process and database: the
    Overview shows them, and the Import and export page reads its counts from the same stored row."""
    return _overview_snapshot(str(engine.url), engine)


@st.cache_resource
def _overview_snapshot(url: str, _engine: Engine) -> Snapshot:
    # Labels per person and day over millions of labels take seconds: the figures are stored in the database for
    # every app server and recomputed by one of them once labels or candidates change (`annotator.figures.snapshots`).
    return Snapshot(_engine, OVERVIEW, ttl=OVERVIEW_TTL_SECONDS, patience=OVERVIEW_PATIENCE_SECONDS)


def _when(reading: Reading) -> str:
    age = max(0, round(reading.age))
    return f"{age} s" if age < 120 else f"{age // 60} min"


def age_text(reading: Reading, *, ttl: float) -> str:
    """'Figures from 12 s ago.' with what is going on: new ones on the way, or the last recomputation failed."""
    text = f"Figures from {_when(reading)} ago; recomputed when labels change or after {ttl:.0f} s."
    if reading.refreshing:
        text += " New figures are being computed and will show here."
    if reading.error is not None:
        text += f" The last recomputation failed: {escape_markdown(reading.error)}."
    return text


def part_text(name: str, reading: Reading) -> str:
    """One more part of the page's figures, computed apart (Team's agreement): its own age and state."""
    if reading.generation == 0:
        text = f"{name}: being computed, shows here when ready." if reading.refreshing else f"{name}: not computed."
    else:
        text = f"{name} from {_when(reading)} ago" + (", being recomputed." if reading.refreshing else ".")
    if reading.error is not None:
        text += f" Its last computation failed: {escape_markdown(reading.error)}."
    return text


def freshness_text(reading: Reading, *, ttl: float, parts: Sequence[tuple[str, Reading]] = ()) -> str:
    """`age_text` and each part's `part_text` (its name and reading), as one caption."""
    return " ".join([age_text(reading, ttl=ttl), *(part_text(name, part) for name, part in parts)])


def show_freshness(snapshot: Snapshot, reading: Reading, *, ttl: float, key: str,
                   parts: Sequence[tuple[str, Snapshot, Reading]] = ()) -> None:
    """The figures' age, ticking while the page is open, and a button that recomputes them now; `parts` are more
    figures of the page computed apart (their name, snapshot and the reading the page shows).

    Every tick looks at the stored figures' rows (their fingerprint and generation: milliseconds); once newer
    figures than the ones on the page exist, computed by this server or another, the whole page runs again to
    show them.
    """

    def _refresh() -> None:
        snapshot.refresh()
        for _, part, _ in parts:
            try:
                part.refresh()
            except ChildFailed:
                pass  # recorded on its row: the caption says it

    @st.fragment(run_every=2)
    def _age() -> None:
        now = snapshot.peek()
        later = [part.latest(wait=0.0) for _, part, _ in parts]
        if now.generation != reading.generation or any(
                new.generation != old.generation for new, (_, _, old) in zip(later, parts)):
            st.rerun()
        left, right = st.columns([2, 1], vertical_alignment="center")
        left.caption(freshness_text(now, ttl=ttl, parts=[(name, new) for (name, _, _), new in zip(parts, later)]))
        right.button("Recompute now", width="stretch", key=f"{key}_refresh", on_click=_refresh,
                     help="Recompute the figures from the data as it is now.")

    _age()
