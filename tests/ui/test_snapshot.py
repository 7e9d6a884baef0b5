"""`ui.snapshot.Snapshot`: the last result at once, a stale one refreshed in the background, one at a time."""

from __future__ import annotations

import threading

from ui.snapshot import Snapshot


def test_first_get_computes_then_stale_values_are_served_while_one_refresh_runs() -> None:
    calls: list[int] = []
    release = threading.Event()

    def compute() -> int:
        calls.append(len(calls))
        if len(calls) > 1:
            release.wait()  # the background refresh is held until the test lets it go
        return len(calls)

    snapshot = Snapshot(compute, ttl=0.0)
    assert snapshot.get()[0] == 1  # the first value is computed in the caller
    # Now stale (ttl 0): the old value comes back at once and one refresh starts, however often one asks.
    assert [snapshot.get()[0] for _ in range(5)] == [1] * 5
    assert calls == [0, 1]
    release.set()
    snapshot.wait()
    assert snapshot.get()[0] == 2


def test_a_failing_refresh_keeps_the_last_value_and_says_why() -> None:
    values = iter([10])

    def compute() -> int:
        return next(values)  # StopIteration the second time

    snapshot = Snapshot(compute, ttl=0.0)
    assert snapshot.get()[0] == 10
    snapshot.wait()
    assert snapshot.get()[0] == 10
    snapshot.wait()
    assert isinstance(snapshot.error, StopIteration)
    assert snapshot.get()[0] == 10


def test_a_fresh_value_is_not_recomputed() -> None:
    calls: list[int] = []
    snapshot = Snapshot(lambda: calls.append(1) or len(calls), ttl=3600)
    assert [snapshot.get()[0] for _ in range(3)] == [1, 1, 1] and calls == [1]
