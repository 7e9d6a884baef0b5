"""Gold items: mixed into every annotator's queue, at most one in N, unannounced; accuracy per annotator."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine

from annotator.database.engine import read_session, write_session
from annotator.labelling import gold, queue
from tests.support.candidates import add_candidates, add_user
from tests.support.cli import run_cli


def _work_through(engine: Engine, annotator_id: int, answer: dict[int, tuple[int, int | None]]) -> list[int]:
    """Label everything the queue hands this annotator, in order; `answer` gives labels for some ids."""
    seen = []
    while True:
        with write_session(engine) as session:
            candidate_id = queue.claim_next(session, annotator_id=annotator_id)
            if candidate_id is None:
                return seen
            seen.append(candidate_id)
            check, difficulty = answer.get(candidate_id, (1, 0))
            queue.decide(session, annotator_id=annotator_id, candidate_id=candidate_id, human_check=check,
                         difficulty_eval=difficulty)


def test_gold_items_come_at_most_one_in_n_once_to_everyone(engine: Engine) -> None:
    ids = add_candidates(engine, 12)
    golden = {ids[3]: (0, None), ids[7]: (1, 1), ids[10]: (1, 0)}
    admin, ann, bea = add_user(engine, "boss", role="admin"), add_user(engine, "ann"), add_user(engine, "bea")
    with write_session(engine) as session:
        for candidate_id, (check, difficulty) in golden.items():
            gold.mark_gold(session, candidate_id=candidate_id, human_check=check, difficulty_eval=difficulty,
                           created_by=admin.id)
        gold.set_gold_every(session, value=3)
    # ann answers two gold items right and one wrong; bea answers them all right.
    ann_seen = _work_through(engine, ann.id, {ids[3]: (0, None), ids[7]: (1, 1), ids[10]: (0, None)})
    bea_seen = _work_through(engine, bea.id, dict(golden))
    # With labels_per_candidate 1, ann took every ordinary candidate; both got every gold item, once.
    assert sorted(ann_seen) == sorted(ids) and sorted(bea_seen) == sorted(golden)
    gold_places = [i for i, cid in enumerate(ann_seen) if cid in golden]
    assert gold_places[0] == 2  # not before two ordinary items
    assert all(b - a >= 3 for a, b in zip(gold_places, gold_places[1:]))
    with read_session(engine) as session:
        accuracy = gold.gold_accuracy(session)
        assert [row["candidate_id"] for row in gold.gold_items(session)] == list(golden)
    assert accuracy["ann"] == {"gold_items": 3, "gold_correct": 2, "gold_accuracy": pytest.approx(2 / 3)}
    assert accuracy["bea"]["gold_accuracy"] == 1.0

    report = json.loads(run_cli(engine.url.render_as_string(hide_password=False), "agreement", "--json").stdout)
    people = {row["name"]: row for row in report["human_check"]["annotators"]}
    assert people["ann"]["gold_accuracy"] == pytest.approx(2 / 3) and people["bea"]["gold_accuracy"] == 1.0
    assert "gold_accuracy" not in people["ann"].get("undefined", {})


def test_gold_off_and_bad_settings(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        gold.mark_gold(session, candidate_id=ids[1], human_check=1, difficulty_eval=0, created_by=None)
        gold.set_gold_every(session, value=0)
        with pytest.raises(ValueError, match="gold_every"):
            gold.set_gold_every(session, value=1)
        with pytest.raises(gold.LabelError):
            gold.mark_gold(session, candidate_id=ids[2], human_check=0, difficulty_eval=1, created_by=None)
    # Off: the gold item never comes, and it is not an ordinary candidate either.
    assert sorted(_work_through(engine, ann.id, {})) == [ids[0], ids[2], ids[3]]
    with write_session(engine) as session:
        gold.unmark_gold(session, candidate_id=ids[1])
    assert _work_through(engine, ann.id, {}) == [ids[1]]


def test_gold_from_the_command_line(engine: Engine) -> None:
    add_candidates(engine, 3)
    url = engine.url.render_as_string(hide_password=False)
    result = run_cli(url, "gold", "--mark", "math_2_remove_1", "--label", "2")
    assert result.returncode == 0, result.stderr
    assert "math_2_remove_1\thuman_check=1\tdifficulty_eval=1\tlabels=0" in result.stdout
    bad = run_cli(url, "gold", "--mark", "math_0_remove_1", "--label", "5")
    assert bad.returncode == 2 and "--label must be one of 0, 1, 2" in bad.stderr
    missing = run_cli(url, "gold", "--unmark", "nope_1_remove_1")
    assert missing.returncode == 2 and "no candidate has data_id 'nope_1_remove_1'" in missing.stderr
    with read_session(engine) as session:
        assert [row["data_id"] for row in gold.gold_items(session)] == ["math_2_remove_1"]
    assert "gold_every = 4" in run_cli(url, "settings", "--gold-every", "4").stdout.splitlines()
    assert run_cli(url, "settings", "--gold-every", "1").returncode == 2
