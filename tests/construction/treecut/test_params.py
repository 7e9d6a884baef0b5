"""TreeCut parameters and file names."""

from __future__ import annotations

import pytest

from annotator.construction import treecut
from annotator.construction.treecut import Params


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_vars": 4, "ans_depth": 1, "cut_depth": 1}, "ansDepth must be at least 2"),
        ({"num_vars": 3, "ans_depth": 4, "cut_depth": 1}, "numVars (3) must be at least ansDepth (4)"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 4}, "1 <= cutDepth < ansDepth"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 0}, "1 <= cutDepth < ansDepth"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 2, "order": "sideways"}, "order must be one of"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 2, "theme": "cars"}, "unknown theme 'cars'"),
        ({"num_vars": 15, "ans_depth": 4, "cut_depth": 2, "composite_name": False}, "14 item names"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Params(**kwargs)


def test_file_names_round_trip() -> None:
    params = Params(10, 8, 4, composite_name=False, order="backward")
    name = params.file_name(unanswerable=True, count=100)
    assert (
        name
        == "qa_theme-food_compositeName_False_numVars-10_ansDepth-8_order-backward_hallu-True_cutDepth-4_REP-100.jsonl"
    )
    assert treecut.parse_file_name(name) == {**params.as_dict(), "hallu": True, "REP": 100}
    assert treecut.parse_file_name("notes.jsonl") is None
