"""The age of the slow pages' shared figures on the page (`annotator.figures.snapshots`: stored in the database for
every app server, recomputed by one of them once stale): a ticking caption and a Recompute now button."""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine

from annotator.figures.pages import OVERVIEW
from annotator.figures.snapshots import Reading, Snapshot

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


def age_text(reading: Reading, *, ttl: float) -> str:
    """'Figures from 12 s ago.' with what is going on: new ones on the way, or the last recomputation failed."""
    age = max(0, round(reading.age))
    when = f"{age} s" if age < 120 else f"{age // 60} min"
    text = f"Figures from {when} ago; recomputed when labels change or after {ttl:.0f} s."
    if reading.refreshing:
        text += " New figures are being computed and will show here."
    if reading.error is not None:
        text += f" The last recomputation failed: {reading.error}."
    return text


def show_freshness(snapshot: Snapshot, reading: Reading, *, ttl: float, key: str) -> None:
    """The figures' age, ticking while the page is open, and a button that recomputes them now.

    Every tick looks at the stored figures' row (their fingerprint and generation: milliseconds); once newer
    figures than the ones on the page exist, computed by this server or another, the whole page runs again to
    show them.
    """

    @st.fragment(run_every=2)
    def _age() -> None:
        now = snapshot.peek()
        if now.generation != reading.generation:
            st.rerun()
        left, right = st.columns([2, 1], vertical_alignment="center")
        left.caption(age_text(now, ttl=ttl))
        right.button("Recompute now", width="stretch", key=f"{key}_refresh", on_click=snapshot.refresh,
                     help="Recompute the figures from the data as it is now.")

    _age()
