"""The vocabulary's parsing: a data_id read by its quick path as by its pattern."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.database import vocabulary
from annotator.database.vocabulary import DataId

# The pattern again, with a reading of its own: what `DataId.parse` must agree with, quick path or not.
_PATTERN = re.compile(
    r"^(?P<source>[A-Za-z0-9][A-Za-z0-9\-.]*(?:_[A-Za-z][A-Za-z0-9\-.]*)*)_(?P<idx>\d+)_(?P<type>[A-Za-z]+)_(?P<k>\d+)$"
)


def _expected(text: str) -> DataId | None:
    match = _PATTERN.match(text)
    if match is None or int(match["k"]) < 1:
        return None
    return DataId(match["source"], int(match["idx"]), match["type"], int(match["k"]))


def _parsed(text: str) -> DataId | None:
    try:
        return DataId.parse(text)
    except ValueError:
        return None


# Parts near the rules' edges: non-ASCII letters and digits (Arabic-Indic, superscript), a trailing newline, k = 0.
_PART = st.text(st.sampled_from(list("aZ09_-.éß٣²\n ")), max_size=6)


@given(source=st.sampled_from(["gsm8k", "math", "a_b", "x-1.y", "_bad", "9_9", "é"]), parts=st.lists(_PART,
       min_size=0, max_size=4))
def test_a_data_id_reads_as_its_pattern_says(source: str, parts: list[str]) -> None:
    """Every text, whether its source was taken before or not, reads as the pattern reads it: the same four parts,
    or an error."""
    text = "_".join([source, *parts])
    vocabulary._SOURCES.clear()
    first = _parsed(text)
    assert first == _expected(text)
    assert _parsed(text) == first  # again, its source now known


@pytest.mark.parametrize("text", ["gsm8k_3_remove_1\n", "gsm8k_٣_remove_1", "gsm8k_3_remové_1", "gsm8k_3_remove_0",
                                  "gsm8k_²_remove_1", "gsm8k_3_remove", "gsm8k__remove_1"])
def test_a_known_source_does_not_let_a_bad_data_id_through(text: str) -> None:
    DataId.parse("gsm8k_1_remove_1")  # the source is known
    assert _parsed(text) == _expected(text)
    if text.endswith("\n") or "٣" in text:
        assert _parsed(text) is not None  # the pattern's own reading: its $ before a newline, \d any decimal digit
    else:
        assert _parsed(text) is None
