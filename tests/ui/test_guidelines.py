"""The human-check guidelines: ReliableMath's criterion 2 as its Step 3 asks, and a check per UMWP category."""

from __future__ import annotations

import pytest

from annotator.import_export.formats.umwp import CATEGORIES
from ui.guidelines import UMWP_CHECKS, guideline_for, umwp_category


@pytest.mark.parametrize("rewrite_type", ["remove", "contradict"])
def test_reliablemath_criterion_2_is_exactly_one_condition_changed(rewrite_type: str) -> None:
    """ReliableMath Section 3.3, Step 3: evaluators check the two criteria of Step 2, the first being that the
    rewrite "only rewrites one condition ... to avoid other conditions modified"."""
    text = guideline_for(rewrite_type)
    criterion = text.split("2. ", 1)[1].split("3. ", 1)[0]
    assert "exactly one" in criterion and "kept every other condition" in criterion
    assert "more than one" in criterion  # a rewrite changing two conditions is refused


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_each_umwp_category_gets_its_own_check(category: int) -> None:
    """UMWP (Sun et al. 2024), Table 1: key information missing, ambiguous key information, unrealistic
    conditions, unrelated object, question missing. No UMWP record has a rewritten condition."""
    rewrite_type, meaning = CATEGORIES[category]
    text = guideline_for(rewrite_type, umwp_category=category)
    title, check = UMWP_CHECKS[category]
    assert title in text and check in text
    assert "`rewritten_condition`" not in text.split("**human_check**", 1)[1]
    others = [UMWP_CHECKS[c][1] for c in UMWP_CHECKS if c != category]
    assert not any(other in text for other in others)
    # UMWP category 1 is stored as `remove`, like ReliableMath's, yet gets the UMWP check.
    assert text != guideline_for(rewrite_type)


def test_the_category_comes_from_the_imported_record() -> None:
    assert umwp_category({"umwp": {"fields": {"category": 4}}}) == 4
    assert umwp_category({"gsm_ic": {}}) is None and umwp_category(None) is None
    assert umwp_category({"umwp": {"fields": {"category": None}}}) is None
