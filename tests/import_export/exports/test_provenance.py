"""Where each resolved label comes from (issue: adjudication), in the annotation export and the manifest."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.import_export.exports import export
from annotator.labelling import adjudication, labels
from tests.support.candidates import add_candidates, add_user


def test_provenance_in_the_annotation_export_and_the_release_manifest(engine: Engine, tmp_path: Path) -> None:
    ids = add_candidates(engine, 4, rewrite_types=("remove",))
    ann, bea, rev = add_user(engine, "ann"), add_user(engine, "bea"), add_user(engine, "rev", role="reviewer")
    # 0: unanimous, 1: a tie adjudicated as kept, 2: single, 3: a tie left unresolved
    chosen = {ann.id: [(1, 0), (1, 1), (1, 1), (0, None)], bea.id: [(1, 0), (0, None), None, (1, 0)]}
    with write_session(engine) as session:
        for annotator_id, values in chosen.items():
            for candidate_id, value in zip(ids, values):
                if value is not None:
                    labels.record_label(session, candidate_id=candidate_id, annotator_id=annotator_id,
                                        human_check=value[0], difficulty_eval=value[1])
        adjudication.adjudicate(session, candidate_id=ids[1], reviewer_id=rev.id, human_check=1, difficulty_eval=1)

    sheet = export("annotation", tmp_path / "sheet", engine=engine)
    rows = json.loads((tmp_path / "sheet" / "annotation.json").read_text(encoding="utf-8"))
    assert [(r["label_source"], r["adjudicated_by"]) for r in rows] == [
        ("unanimous", None), ("adjudicated", "rev"), ("single", None), (None, None)]
    assert rows[1]["adjudicated_at"] and rows[1]["human_check"] == 1
    assert sheet["labels"]["counts"] == {"adjudicated": 1, "single": 1, "unanimous": 1}

    release = export("reliablemath", tmp_path / "release", engine=engine)
    on_disk = json.loads((tmp_path / "release" / "manifest.json").read_text(encoding="utf-8"))
    assert on_disk["labels"] == release["labels"]
    provenance = on_disk["labels"]["candidates"]
    assert list(provenance) == ["math_0_remove_1", "math_1_remove_1", "math_2_remove_1"]
    assert provenance["math_1_remove_1"]["label_source"] == "adjudicated"
    assert provenance["math_1_remove_1"]["adjudicated_by"] == "rev"
    assert provenance["math_1_remove_1"]["adjudicated_at"] == rows[1]["adjudicated_at"]
    assert provenance["math_0_remove_1"] == {"label_source": "unanimous"}
    # The release's own files keep their fields: no provenance inside them.
    unsol = json.loads((tmp_path / "release" / "unsol.json").read_text(encoding="utf-8"))
    assert len(unsol) == 3 and not any("label_source" in record for record in unsol)
