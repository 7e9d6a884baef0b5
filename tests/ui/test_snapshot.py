"""`ui.snapshot.Snapshot`: figures recomputed once stale (too old, or their data's fingerprint moved), one
computation at a time; a look waits a bounded time for new figures, else gets the last ones at once."""

from __future__ import annotations

import threading

from ui.snapshot import Reading, Snapshot, age_text


def test_first_get_computes_then_stale_values_are_served_while_one_refresh_runs() -> None:
    calls: list[int] = []
    data = ["a"]
    release = threading.Event()

    def compute() -> int:
        calls.append(len(calls))
        if len(calls) > 1:
            release.wait()  # the background refresh is held until the test lets it go
        return len(calls)

    snapshot = Snapshot(compute, ttl=3600, version=lambda: tuple(data), patience=0.0)
    first = snapshot.get()
    assert (first.value, first.generation, first.refreshing) == (1, 1, False)
    data.append("b")
    # Now stale: the old value comes back at once, marked, and one refresh starts, however often one asks.
    readings = [snapshot.get() for _ in range(5)]
    assert [(r.value, r.refreshing) for r in readings] == [(1, True)] * 5
    assert calls == [0, 1]
    release.set()
    snapshot.wait()
    assert (snapshot.peek().value, snapshot.peek().generation) == (2, 2) and calls == [0, 1]


def test_a_changed_fingerprint_makes_fresh_figures_stale_and_the_look_waits_for_the_new_ones() -> None:
    data = [1]
    snapshot = Snapshot(lambda: sum(data), ttl=3600, version=lambda: len(data), patience=60)
    assert snapshot.get().value == 1
    data.append(5)  # the data changed seconds after the figures were computed
    reading = snapshot.get()
    assert (reading.value, reading.generation, reading.refreshing) == (6, 2, False)


def test_a_fresh_value_with_the_same_fingerprint_is_not_recomputed() -> None:
    calls: list[int] = []
    snapshot = Snapshot(lambda: calls.append(1) or len(calls), ttl=3600, version=lambda: "same")
    assert [snapshot.get().value for _ in range(3)] == [1, 1, 1] and calls == [1]


def test_refresh_recomputes_now_even_when_fresh() -> None:
    calls: list[int] = []
    snapshot = Snapshot(lambda: calls.append(1) or len(calls), ttl=3600, version=lambda: "same")
    snapshot.get()
    reading = snapshot.refresh()
    assert (reading.value, reading.generation) == (2, 2) and reading.age < 3600


def test_refresh_during_a_running_refresh_waits_for_it_and_computes_again() -> None:
    # The running refresh may have read the data before the change the person wants to see.
    calls: list[int] = []
    started, release = threading.Event(), threading.Event()

    def compute() -> int:
        calls.append(1)
        if len(calls) == 2:
            started.set()
            release.wait()
        return len(calls)

    snapshot = Snapshot(compute, ttl=0.0, patience=0.0)
    snapshot.get()
    snapshot.get()  # starts the held refresh
    started.wait()
    done: list[Reading[int]] = []
    pressed = threading.Thread(target=lambda: done.append(snapshot.refresh()))
    pressed.start()
    release.set()
    pressed.join()
    assert done[0].value == 3 and calls == [1, 1, 1]


def test_a_failing_refresh_keeps_the_last_value_and_says_why() -> None:
    values = iter([10])

    def compute() -> int:
        return next(values)  # StopIteration the second time

    snapshot = Snapshot(compute, ttl=0.0, patience=60)
    assert snapshot.get().value == 10
    reading = snapshot.get()  # waits for the failing refresh
    assert reading.value == 10 and isinstance(snapshot.error, StopIteration)
    assert "The last recomputation failed: StopIteration." in age_text(reading, ttl=30, error=snapshot.error)


def test_age_text_in_seconds_then_minutes_and_says_when_new_figures_come() -> None:
    assert age_text(Reading(0, 12.4, False, 1), ttl=30) == (
        "Figures from 12 s ago; recomputed when labels change or after 30 s.")
    assert age_text(Reading(0, 467.0, True, 1), ttl=30).startswith("Figures from 7 min ago;")
    assert "New figures are being computed" in age_text(Reading(0, 467.0, True, 1), ttl=30)
