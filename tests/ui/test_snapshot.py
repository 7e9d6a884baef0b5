"""`ui.snapshot.age_text`, `part_text`: the figures' age on the page, and what is going on (the shared figures
themselves are `annotator.figures.snapshots`, tested in tests/figures/test_snapshots.py)."""

from __future__ import annotations

from annotator.figures.snapshots import Reading
from ui.snapshot import age_text, part_text


def test_age_text_in_seconds_then_minutes_and_says_when_new_figures_come() -> None:
    assert age_text(Reading(0, 12.4, False, 1), ttl=30) == (
        "Figures from 12 s ago; recomputed when labels change or after 30 s.")
    assert age_text(Reading(0, 467.0, True, 1), ttl=30).startswith("Figures from 7 min ago;")
    assert "New figures are being computed" in age_text(Reading(0, 467.0, True, 1), ttl=30)


def test_age_text_says_the_last_recomputation_failed() -> None:
    text = age_text(Reading(0, 3.0, False, 2, error="StopIteration"), ttl=30)
    assert text.endswith(" The last recomputation failed: StopIteration.")


def test_part_text_says_when_a_part_is_on_its_way_stored_or_failed() -> None:
    assert part_text("Agreement", Reading(None, 0.0, True, 0)) == "Agreement: being computed, shows here when ready."
    assert part_text("Agreement", Reading({}, 75.2, True, 3)) == "Agreement from 75 s ago, being recomputed."
    failed = part_text("Agreement", Reading({}, 200.0, False, 3,
                                            error="the process computing the figures stopped (exit code 3)"))
    # Markdown source: the error's text escaped, shown as written.
    assert failed == ("Agreement from 3 min ago. Its last computation failed: the process computing the figures "
                      "stopped \\(exit code 3\\).")
