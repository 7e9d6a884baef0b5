"""Our time limit on math-verify holds off the main thread, where its own (`signal.alarm`) cannot run."""

from __future__ import annotations

import threading
import time

import pytest

from annotator.transcripts.judge.deadline import TimeLimit, time_limit
from annotator.transcripts.judge.equivalence import equivalent


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _in_thread(work) -> dict[str, object]:  # type: ignore[no-untyped-def]
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - the test looks at what arrived
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return outcome


def test_a_long_computation_off_the_main_thread_is_stopped() -> None:
    def work() -> float | None:
        started = time.monotonic()
        try:
            with time_limit(0.2):
                _spin(30)
        except TimeLimit:
            return time.monotonic() - started
        return None

    elapsed = _in_thread(work)["value"]
    # Stopped at the limit, not after the 30 s of work (the margin is for a busy shared machine).
    assert isinstance(elapsed, float) and 0.2 <= elapsed < 5


def test_work_that_finishes_in_time_is_untouched_and_nothing_fires_later() -> None:
    def work() -> str:
        for _ in range(200):
            with time_limit(0.05):
                pass
        _spin(0.2)  # past every deadline set above: none may still arrive
        return "done"

    assert _in_thread(work) == {"value": "done"}


def test_a_swallowed_time_limit_is_raised_again_when_the_block_ends() -> None:
    with pytest.raises(TimeLimit):
        with time_limit(0.05):
            try:
                _spin(5)
            except BaseException:  # noqa: BLE001 - code that swallows everything, as some libraries do
                pass


def test_math_verify_out_of_time_off_the_main_thread_gives_no_verdict() -> None:
    # A fresh expression (not in the parse cache) with a limit far below what parsing it takes.
    answer = "\\int_0^{1} x^{17} \\sin(x)\\,dx + \\frac{\\sqrt{1234567}}{\\pi^{3}}"
    outcome = _in_thread(lambda: equivalent("\\frac{1}{3}", answer, seconds=1e-6))
    assert outcome == {"value": None}
    # With time enough, the same call on the same thread kind gives an answer.
    assert _in_thread(lambda: equivalent("\\frac{1}{2}", "0.5", seconds=5)) == {"value": True}
