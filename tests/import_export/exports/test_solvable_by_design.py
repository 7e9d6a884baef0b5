"""Solvable-by-design candidates (GSM-IC distractors) never leak into ReliableMath's unsolvable files.

ReliableMath (Section 3, Step 3; design notes section 4): `unsol/{source}.json` holds the human-checked
*unsolvable* rewrites (human_check = 1). For a GSM-IC distractor (Shi et al. 2023, Section 3.1) human_check = 1
means "answer unchanged", i.e. a solvable problem; it belongs to the GSM-IC export, and `stats` totals it apart.
"""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from annotator.database.engine import read_session, write_session
from annotator.figures import stats
from annotator.import_export.exports import export
from annotator.labelling.labels import record_label
from tests.support.candidates import add_candidates, add_user


def _label_all_vetted(engine: Engine, candidate_ids: list[int]) -> None:
    user = add_user(engine, "ann")
    with write_session(engine) as session:
        for candidate_id in candidate_ids:
            record_label(session, candidate_id=candidate_id, annotator_id=user.id, human_check=1, difficulty_eval=0)


def test_vetted_distractors_stay_out_of_the_unsolvable_files(engine: Engine, tmp_path: Path) -> None:
    unsolvable = add_candidates(engine, 4, data_source="gsm8k", rewrite_types=("remove", "contradict"))
    distractors = add_candidates(engine, 3, data_source="gsm8k", rewrite_types=("distractor",), start=4)
    _label_all_vetted(engine, unsolvable + distractors)

    export("reliablemath", tmp_path / "rm", engine=engine)
    for name in ("unsol.json", "unsol/gsm8k.json"):
        released = json.loads((tmp_path / "rm" / name).read_text(encoding="utf-8"))
        assert sorted(r["data_id"] for r in released) == [
            "gsm8k_0_remove_1", "gsm8k_1_contradict_1", "gsm8k_2_remove_1", "gsm8k_3_contradict_1",
        ], name

    # The distractors go to their own export, in GSM-IC's format.
    export("gsm_ic", tmp_path / "ic", engine=engine)
    rows = json.loads((tmp_path / "ic" / "GSM-IC_distract.json").read_text(encoding="utf-8"))
    assert [r["new_question"] for r in rows] == [f"Problem gsm8k {i}: let $x > {i}$. Find $x^2$." for i in (4, 5, 6)]
    assert [r["answer"] for r in rows] == ["25", "36", "49"]


def test_stats_total_solvable_by_design_apart(engine: Engine) -> None:
    unsolvable = add_candidates(engine, 2, data_source="gsm8k", rewrite_types=("remove",))
    distractors = add_candidates(engine, 3, data_source="gsm8k", rewrite_types=("distractor",), start=2)
    add_candidates(engine, 1, data_source="gsm8k", rewrite_types=("contradict",), start=5, status="unverified")
    _label_all_vetted(engine, unsolvable + distractors)
    with read_session(engine) as session:
        result = stats.compute(session)
    source = result["sources"]["gsm8k"]
    assert source["by_rewrite_type"]["distractor"]["vetted"] == 3
    assert source["total"]["vetted"] == 2 and source["total"]["candidates"] == 3
    assert source["total"]["unverified"] == 1
    assert source["solvable_by_design"]["vetted"] == 3 and result["solvable_by_design"]["candidates"] == 3
    assert result["total"]["vetted"] == 2
    table = stats.rows(result)
    assert [(r["data_source"], r["rewrite_type"], r["vetted"]) for r in table if r["rewrite_type"] in (
        "all", "solvable by design")] == [
        ("gsm8k", "all", 2), ("gsm8k", "solvable by design", 3), ("all", "all", 2), ("all", "solvable by design", 3),
    ]
