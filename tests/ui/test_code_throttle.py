"""Wrong sign-in codes per client (`ui.code_throttle`): free attempts, then waits that double up to the cap,
forgotten after a while; right codes never count; clients apart; a bounded memory."""

from __future__ import annotations

from ui.code_throttle import FIRST_DELAY, FORGET_AFTER, FREE_ATTEMPTS, MAX_DELAY, CodeThrottle, delay


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_after_the_free_attempts_each_wrong_code_waits_twice_as_long_up_to_the_cap() -> None:
    clock = Clock()
    throttle = CodeThrottle(clock=clock)
    assert [throttle.admit("a") for _ in range(FREE_ATTEMPTS)] == [0] * FREE_ATTEMPTS
    waits = []
    while (wait := throttle.admit("a")) and len(waits) < 12:
        waits.append(wait)
        assert throttle.admit("a") == wait  # refused again, counting nothing
        clock.now += wait - 0.5
        assert throttle.admit("a") > 0  # not yet
        clock.now += 0.5
        assert throttle.admit("a") == 0  # its turn: counted
    assert waits[:3] == [FIRST_DELAY, 2 * FIRST_DELAY, 4 * FIRST_DELAY]
    assert max(waits) == MAX_DELAY and waits[-1] == MAX_DELAY
    assert delay(FREE_ATTEMPTS - 1) == 0 and delay(FREE_ATTEMPTS) == FIRST_DELAY
    assert delay(FREE_ATTEMPTS + 5_000) == MAX_DELAY  # a client that kept at it for days: still the cap


def test_right_codes_never_count_and_other_clients_are_apart() -> None:
    clock = Clock()
    throttle = CodeThrottle(clock=clock)
    for _ in range(10 * FREE_ATTEMPTS):  # an office's one address, many people signing in
        assert throttle.admit("office") == 0
        throttle.hand_back("office")
    for _ in range(FREE_ATTEMPTS):
        throttle.admit("guesser")
    assert throttle.admit("guesser") > 0
    assert throttle.admit("office") == 0 and throttle.admit("someone else") == 0


def test_a_clients_wrong_codes_are_forgotten_after_a_while() -> None:
    clock = Clock()
    throttle = CodeThrottle(clock=clock)
    for _ in range(FREE_ATTEMPTS + 3):
        throttle.admit("a")
        clock.now += MAX_DELAY  # each one waited its turn
    assert throttle.admit("a") == 0
    assert throttle.admit("a") > 0
    clock.now += FORGET_AFTER
    assert [throttle.admit("a") for _ in range(FREE_ATTEMPTS)] == [0] * FREE_ATTEMPTS


def test_it_remembers_at_most_max_clients_the_least_recent_forgotten_first() -> None:
    throttle = CodeThrottle(clock=Clock(), max_clients=3)
    for _ in range(FREE_ATTEMPTS):
        throttle.admit("old")
    for _ in range(FREE_ATTEMPTS):
        throttle.admit("recent")
    assert throttle.admit("old") > 0  # refused, and now the most recent
    throttle.admit("b")
    throttle.admit("c")  # four clients: "recent" is the least recent
    assert throttle.admit("old") > 0
    assert throttle.admit("recent") == 0
    assert len(throttle) == 3
