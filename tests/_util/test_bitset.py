"""The importer's set of met ids, one bit each."""

from __future__ import annotations

import random

from annotator._util.bitset import BitSet


def test_it_holds_exactly_the_numbers_added_as_a_set_does() -> None:
    rng = random.Random(3)
    added = {rng.randrange(0, 2_000_000) for _ in range(5_000)} | {0, 7, 8, 32_767, 32_768}
    bits = BitSet()
    for number in added:
        bits.add(number)
    probes = added | {rng.randrange(0, 3_000_000) for _ in range(20_000)} | {-1, 10**9}
    assert {number for number in probes if number in bits} == added


def test_adding_twice_and_strangers_change_nothing() -> None:
    bits = BitSet()
    bits.add(5)
    bits.add(5)
    assert 5 in bits and 4 not in bits and 6 not in bits
    assert "5" not in bits and None not in bits


def test_add_new_tells_whether_the_number_was_there_before() -> None:
    bits = BitSet()
    assert bits.add_new(40_000) is True  # past the end: the set grows
    assert bits.add_new(40_000) is False
    assert bits.add_new(40_001) is True and bits.add_new(0) is True
    assert {number for number in range(40_010) if number in bits} == {0, 40_000, 40_001}
