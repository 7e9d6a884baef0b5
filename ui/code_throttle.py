"""Wrong sign-in codes per client, for `/_annotator/session` (`ui.session_cookie`): after `FREE_ATTEMPTS` wrong
codes from one client, each further attempt must wait, twice as long after every wrong one (`delay`), up to
`MAX_DELAY`; a client's count is forgotten `FORGET_AFTER` after its last wrong code.

A code is 256 random bits, so guessing one is hopeless; this keeps a client that posts code after code from
making the database answer each. It lives in the process (not the database like `annotator.accounts.throttle`): the
refusal costs no query, which is its point. An attempt is counted when it is let through, before the database
answers, and handed back when its code was right: a burst of requests sent at once is held to the same count
as one sent in turns, and signing in (a right code) never counts against a client, such as an office's one
address that many people sign in from.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

FREE_ATTEMPTS = 10
FIRST_DELAY = 1.0  # seconds
MAX_DELAY = 60.0
FORGET_AFTER = 600.0
_DOUBLINGS_PAST_MAX = math.ceil(math.log2(MAX_DELAY / FIRST_DELAY)) + 1
MAX_CLIENTS = 10_000  # clients remembered at once; beyond, the least recent is forgotten


def delay(counted: int) -> float:
    """How many seconds after the latest counted attempt the next one must wait, given the count so far."""
    if counted < FREE_ATTEMPTS:
        return 0.0
    doublings = min(counted - FREE_ATTEMPTS, _DOUBLINGS_PAST_MAX)  # 2**1024 is past a float: an OverflowError
    return min(FIRST_DELAY * 2**doublings, MAX_DELAY)


@dataclass
class _Count:
    counted: int
    last: float  # when the latest counted attempt came (the clock's seconds)


class CodeThrottle:
    """The counts of the clients (by address) that posted codes lately; `clock` gives seconds (monotonic)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_clients: int = MAX_CLIENTS) -> None:
        self._clock = clock
        self._max_clients = max_clients
        self._counts: dict[str, _Count] = {}  # least recent first

    def admit(self, client: str) -> int:
        """Count an attempt of `client` and return 0, or, when it must still wait, count nothing and return the
        whole seconds to wait (at least 1: an HTTP Retry-After)."""
        now = self._clock()
        count = self._counts.pop(client, None)
        if count is not None and now - count.last >= FORGET_AFTER:
            count = None
        if count is not None and (wait := count.last + delay(count.counted) - now) > 0:
            self._counts[client] = count
            return max(1, math.ceil(wait))
        self._forget_beyond(self._max_clients - 1)
        self._counts[client] = _Count(counted=(count.counted if count else 0) + 1, last=now)
        return 0

    def hand_back(self, client: str) -> None:
        """Take back the attempt `admit` counted for `client`: its code was right (or the database could not say)."""
        count = self._counts.get(client)
        if count is not None:
            count.counted = max(0, count.counted - 1)

    def __len__(self) -> int:
        """How many clients it remembers."""
        return len(self._counts)

    def _forget_beyond(self, keep: int) -> None:
        while len(self._counts) > keep:
            del self._counts[next(iter(self._counts))]
