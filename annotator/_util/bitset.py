"""A set of non-negative integers (row ids) kept as one bit each, not a Python int per id as in a `set`, so an
import that meets every stored candidate keeps its memory flat."""

from __future__ import annotations

_GROW = 4096  # bytes added at least when an id lands past the end (32,768 more ids)


class BitSet:
    def __init__(self) -> None:
        self._bits = bytearray()

    def add(self, number: int) -> None:
        self.add_new(number)

    def add_new(self, number: int) -> bool:
        """Add `number` (not negative); whether it was not in the set before."""
        byte, bit = number >> 3, 1 << (number & 7)
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(_GROW, byte + 1 - len(self._bits))))
        held = self._bits[byte]
        self._bits[byte] = held | bit
        return not held & bit

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int) or number < 0:
            return False
        byte = number >> 3
        return byte < len(self._bits) and bool(self._bits[byte] & (1 << (number & 7)))
