"""The age of the slow pages' shared figures on the page (`annotator.figures.snapshots`: stored in the database for
every app server, recomputed by one of them once stale): a ticking caption and a Recompute now button."""

from __future__ import annotations

from annotator.figures.snapshots import Reading, Snapshot


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
    import streamlit as st

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
