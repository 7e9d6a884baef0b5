"""A set of non-negative integers (row ids) kept as one bit each: a million ids take 125 kB, not a `set`'s ~60 MB,
so an import that meets every stored candidate keeps its memory flat."""

from __future__ import annotations

_GROW = 4096  # bytes added at least when an id lands past the end (32,768 more ids)


class BitSet:
    def __init__(self) -> None:
        self._bits = bytearray()

    def add(self, number: int) -> None:
        byte = number >> 3
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(_GROW, byte + 1 - len(self._bits))))
        self._bits[byte] |= 1 << (number & 7)

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int) or number < 0:
            return False
        byte = number >> 3
        return byte < len(self._bits) and bool(self._bits[byte] & (1 << (number & 7)))
