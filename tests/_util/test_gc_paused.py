"""`gc_paused.paused`: no cyclic collection inside, the collector as it was afterwards, nested and from threads."""

from __future__ import annotations

import gc
import threading

from annotator._util.gc_paused import paused


def test_the_collector_is_off_inside_and_as_it_was_afterwards() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():  # nested (a report's read inside the report)
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause goes on
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_overlapping_pauses_of_two_threads_end_when_the_last_one_does() -> None:
    """Thread A pauses, B pauses, A ends: still paused until B ends (one computation does not switch the collector
    back on under another's)."""
    a_in, b_in, a_out, b_may_end = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def first() -> None:
        with paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second() -> None:
        a_in.wait(5)
        with paused():
            b_in.set()
            a_out.wait(5)
            seen["after A ended"] = gc.isenabled()
            b_may_end.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    a_out.wait(5)
    b_may_end.set()
    for thread in threads:
        thread.join(5)
    assert seen == {"after A ended": False}
    assert gc.isenabled()
