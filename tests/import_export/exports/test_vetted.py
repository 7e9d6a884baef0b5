"""Vetted means complete: with labels_per_candidate = k a candidate is released only when k
labels resolve to human_check = 1 or a reviewer adjudicated it so; `include_incomplete` also takes the others
whose labels so far resolve to 1, and the manifest says which rule was used and how many were left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator.database.engine import read_session, write_session
from annotator.figures import stats
from annotator.import_export.exports import export
from annotator.labelling import adjudication, labels, queue
from annotator.transcripts.evaluation_set import evaluation_items
from tests.support.candidates import add_candidates, add_user
from tests.support.cli import run_cli


@pytest.fixture
def project(engine: Engine) -> dict[str, int]:
    """k = 2 and five candidates: `one` has a single label of human_check = 1 (incomplete), `two` two such
    labels (complete), `mixed` labels 1 and 0 (a tie: disputed), `rejected` one label 0, `none` no label.
    Returns their ids by those names."""
    names = ("one", "two", "mixed", "rejected", "none")
    ids = dict(zip(names, add_candidates(engine, len(names), rewrite_types=("remove",)), strict=True))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    given = [("one", ann, 1, 0), ("two", ann, 1, 1), ("two", bea, 1, 1), ("mixed", ann, 1, 0),
             ("mixed", bea, 0, None), ("rejected", ann, 0, None)]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for name, who, check, difficulty in given:
            labels.record_label(session, candidate_id=ids[name], annotator_id=who.id, human_check=check,
                                difficulty_eval=difficulty)
    return ids


def _released(out: Path) -> list[str]:
    return [record["data_id"] for record in json.loads((out / "unsol.json").read_text(encoding="utf-8"))]


def _adjudicate(engine: Engine, candidate_id: int, human_check: int = 1) -> None:
    reviewer = add_user(engine, f"rev{candidate_id}{human_check}", role="reviewer")
    with write_session(engine) as session:
        adjudication.adjudicate(session, candidate_id=candidate_id, reviewer_id=reviewer.id, human_check=human_check,
                                difficulty_eval=0 if human_check else None)


def test_one_label_of_two_is_not_vetted_until_complete_or_adjudicated(
    engine: Engine, project: dict[str, int], tmp_path: Path
) -> None:
    manifest = export("reliablemath", tmp_path / "vetted", engine=engine)
    assert _released(tmp_path / "vetted") == ["math_1_remove_1"]  # `two` only
    assert manifest["vetted"] == {"rule": "complete-or-adjudicated", "labels_per_candidate": 2,
                                  "imported_labels_count": True, "incomplete": 1, "left_out": 1}
    assert list(manifest["labels"]["candidates"]) == ["math_1_remove_1"]
    assert "options" not in manifest

    manifest = export("reliablemath", tmp_path / "all", engine=engine, options={"include_incomplete": True})
    assert _released(tmp_path / "all") == ["math_0_remove_1", "math_1_remove_1"]
    assert manifest["vetted"] == {"rule": "include-incomplete", "labels_per_candidate": 2,
                                  "imported_labels_count": True, "incomplete": 1, "left_out": 0}
    assert manifest["options"] == {"include_incomplete": True}
    assert manifest["labels"]["counts"] == {"single": 1, "unanimous": 1}

    _adjudicate(engine, project["one"])
    _adjudicate(engine, project["mixed"])
    manifest = export("reliablemath", tmp_path / "decided", engine=engine)
    assert _released(tmp_path / "decided") == ["math_0_remove_1", "math_1_remove_1", "math_2_remove_1"]
    assert manifest["vetted"]["incomplete"] == manifest["vetted"]["left_out"] == 0
    assert manifest["labels"]["counts"] == {"adjudicated": 2, "unanimous": 1}


def test_a_complete_rejection_or_an_adjudicated_rejection_is_never_released(
    engine: Engine, project: dict[str, int], tmp_path: Path
) -> None:
    _adjudicate(engine, project["one"], human_check=0)
    export("reliablemath", tmp_path / "all", engine=engine, options={"include_incomplete": True})
    assert _released(tmp_path / "all") == ["math_1_remove_1"]


def test_with_one_label_per_candidate_a_single_label_is_complete(engine: Engine, project: dict[str, int],
                                                                  tmp_path: Path) -> None:
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=1)
    manifest = export("reliablemath", tmp_path, engine=engine)
    assert _released(tmp_path) == ["math_0_remove_1", "math_1_remove_1"]
    assert manifest["vetted"] == {"rule": "complete-or-adjudicated", "labels_per_candidate": 1,
                                  "imported_labels_count": True, "incomplete": 0, "left_out": 0}


def test_stats_count_as_vetted_exactly_what_the_release_holds(
    engine: Engine, project: dict[str, int], tmp_path: Path
) -> None:
    with read_session(engine) as session:
        result = stats.compute(session)
        progress = stats.progress(session)
    total = result["total"]
    assert result["labels_per_candidate"] == 2
    counted = (total["checked"], total["vetted"], total["incomplete"], total["rejected"], total["disputed"])
    assert counted == (4, 1, 1, 1, 1)
    assert (total["simple"], total["hard"]) == (0, 1)  # of the vetted ones only
    states = {row["state"]: row["candidates"] for row in progress["states"]}
    assert states == {"in progress": 2, "complete": 1, "disputed": 1, "unlabelled": 1}
    manifest = export("reliablemath", tmp_path / "out", engine=engine)
    assert total["vetted"] == manifest["files"]["unsol.json"]["records"]
    assert total["incomplete"] == manifest["vetted"]["left_out"]

    _adjudicate(engine, project["one"])
    with read_session(engine) as session:
        total = stats.compute(session)["total"]
    manifest = export("reliablemath", tmp_path / "again", engine=engine)
    assert (total["vetted"], total["incomplete"], total["simple"]) == (2, 0, 1)
    assert total["vetted"] == manifest["files"]["unsol.json"]["records"]


def test_the_vetted_evaluation_set_and_the_gsm_ic_export_use_the_same_rule(
    engine: Engine, project: dict[str, int], tmp_path: Path
) -> None:
    with read_session(engine) as session:
        unsolvable = [item.data_id for item in evaluation_items(session, item_set="vetted") if item.unsolvable]
    assert unsolvable == ["math_1_remove_1"]
    # Two distractors labelled human_check = 1 by one annotator each: the one a reviewer also decided is vetted.
    first, second = add_candidates(engine, 2, data_source="gsm8k", rewrite_types=("distractor",))
    cy = add_user(engine, "cy")
    with write_session(engine) as session:
        for candidate_id in (first, second):
            labels.record_label(session, candidate_id=candidate_id, annotator_id=cy.id, human_check=1,
                                difficulty_eval=0)
    _adjudicate(engine, second)
    export("gsm_ic", tmp_path, engine=engine)
    rows = json.loads((tmp_path / "GSM-IC_distract.json").read_text(encoding="utf-8"))
    assert [r["new_question"] for r in rows] == ["Problem gsm8k 1: let $x > 1$. Find $x^2$."]


def test_the_annotation_export_keeps_every_candidate_with_its_provenance(
    engine: Engine, project: dict[str, int], tmp_path: Path
) -> None:
    manifest = export("annotation", tmp_path, engine=engine)
    rows = json.loads((tmp_path / "annotation.json").read_text(encoding="utf-8"))
    assert [(r["unsol_id"], r["human_check"], r["label_source"]) for r in rows] == [
        ("math_0_remove_1", 1, "single"), ("math_1_remove_1", 1, "unanimous"), ("math_2_remove_1", None, None),
        ("math_3_remove_1", 0, "single"), ("math_4_remove_1", None, None)]
    assert manifest["labels"]["counts"] == {"single": 2, "unanimous": 1}
    assert "vetted" not in manifest


def test_the_cli_flag(engine: Engine, database_url: str, project: dict[str, int], tmp_path: Path) -> None:
    plain = run_cli(database_url, "export", "--out", str(tmp_path / "plain"))
    assert plain.returncode == 0, plain.stderr
    assert _released(tmp_path / "plain") == ["math_1_remove_1"]
    assert plain.stdout.splitlines()[-1] == ("left out 1 incomplete candidate(s): fewer than 2 label(s) and not "
                                             "adjudicated; --include-incomplete puts them in")
    flagged = run_cli(database_url, "export", "--include-incomplete", "--out", str(tmp_path / "flagged"))
    assert flagged.returncode == 0, flagged.stderr
    assert _released(tmp_path / "flagged") == ["math_0_remove_1", "math_1_remove_1"]
    assert "left out" not in flagged.stdout
    manifest = json.loads((tmp_path / "flagged" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["vetted"]["rule"] == "include-incomplete" and manifest["options"] == {"include_incomplete": True}

    text = run_cli(database_url, "stats")
    assert text.returncode == 0 and "incomplete" in text.stdout and "2 label(s)" in text.stdout
    counted = json.loads(run_cli(database_url, "stats", "--json").stdout)
    assert counted["total"]["vetted"] == 1 and counted["total"]["incomplete"] == 1


def test_the_cli_flag_on_another_format_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(f"sqlite:///{tmp_path / 'a.sqlite'}", "export", "--format", "labels", "--include-incomplete",
                     "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and (
        "--include-incomplete applies to --format reliablemath or hf only") in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
