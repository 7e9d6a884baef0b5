"""Busy is not broken: an admin imports 300,000 labels (`python -m annotator import sheet.json --annotator alice`,
a real process) while an annotator keeps labelling through the function the Annotate page uses
(`ui.writes.page_write` + `queue.decide`). Every press is either saved or told "busy" (`DatabaseBusy`), none
waits much longer than the page's busy timeout, and afterwards the database holds exactly the presses that were
saved, next to all 300,000 imported labels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from annotator.accounts.policies import Capability
from annotator.database.engine import DatabaseBusy, get_engine, read_session
from annotator.database.models import Annotation
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.labelling import queue
from tests.conftest import PROJECT_ROOT
from tests.support.candidates import add_user
from tests.support.sqlite_lock import write_locked
from tests.support.waiting import wait_for
from ui.writes import declaring, page_write

LABELS = 300_000
BUSY_SECONDS = 2.0


def _sheets(directory: Path) -> tuple[Path, Path]:
    """The paper's annotation sheet (Fig. 10), with and without labels, as bench/bench_label_import.py makes it."""
    rows = [
        {
            "unsol_id": f"bench_{i // 6}_remove_{i % 6 + 1}",
            "data_source": "bench",
            "question": f"Problem {i // 6}: a train travels at $v = {i % 6 + 3}$ km/h for $3$ hours. How far?",
            "ground_truth": str((i % 6 + 3) * 3),
            "rewritten_condition": f"The speed $v = {i % 6 + 3}$ km/h was removed.",
            "rewritten_question": f"Candidate {i}: a train travels for $3$ hours. How far has it gone?",
            "unsolvable_reason": "Without the speed the distance cannot be determined.",
            "human_check": 1,
            "difficulty_eval": i % 2,
        }
        for i in range(LABELS)
    ]
    labelled, blank = directory / "sheet.json", directory / "blank.json"
    labelled.write_text(json.dumps(rows), encoding="utf-8")
    blank.write_text(json.dumps([{**row, "human_check": None, "difficulty_eval": None} for row in rows]),
                     encoding="utf-8")
    return labelled, blank


@pytest.mark.slow
def test_labels_during_a_300k_label_import_are_saved_or_refused_never_lost(
    tmp_path: Path, set_environment: Callable[..., None]
) -> None:
    set_environment(ANNOTATOR_PAGE_BUSY_SECONDS=str(BUSY_SECONDS))
    db = tmp_path / "busy.sqlite"
    url = f"sqlite:///{db}"
    engine: Engine = get_engine(url)
    labelled, blank = _sheets(tmp_path)
    import_parts(read(blank), engine=engine)
    bob = add_user(engine, "bob")
    importer = subprocess.Popen(
        [sys.executable, "-m", "annotator", "import", str(labelled), "--annotator", "alice"],
        cwd=PROJECT_ROOT, env={**os.environ, "ANNOTATOR_DATABASE_URL": url}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for(lambda: write_locked(str(db)) or importer.poll() is not None, 300,
                 "the import to take the write lock")
        saved, refused, waits = [], [], []
        candidate_id = 1
        while importer.poll() is None or not waits:  # at least one press, the first while the import writes
            start = time.monotonic()
            try:
                with declaring(Capability.annotate), page_write(engine, user=bob) as session:
                    queue.decide(session, annotator_id=bob.id, candidate_id=candidate_id, human_check=0,
                                 difficulty_eval=None)
                saved.append(candidate_id)
            except DatabaseBusy:
                refused.append(candidate_id)
            waits.append(time.monotonic() - start)
            candidate_id += 1
        out, err = importer.communicate(timeout=600)
    finally:
        if importer.poll() is None:
            importer.kill()
    assert importer.returncode == 0, err
    assert f"{LABELS} labels added" in out
    assert "Traceback" not in err
    # Each press waited at most the page's busy timeout (plus the time to say so), never the import's length.
    assert max(waits) < BUSY_SECONDS + 1.5, waits
    with read_session(engine) as session:
        bobs = set(session.execute(select(Annotation.candidate_id).where(Annotation.annotator_id == bob.id)).scalars())
        total = session.execute(select(func.count()).select_from(Annotation)).scalar_one()
    assert bobs == set(saved), "a press that was not refused must be saved, and only those"
    assert not bobs & set(refused)
    assert total == LABELS + len(saved)
