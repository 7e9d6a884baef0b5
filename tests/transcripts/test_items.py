"""Evaluation items: ReliableMath's A set (solvable problems) and U set (vetted candidates), Section 4."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, literal, select, union_all, update

from annotator.db import read_session, write_session
from annotator.models import Candidate
from annotator.transcripts import evaluation_items, items_by_data_id
from annotator.transcripts.items import with_items
from tests.formats.test_reliablemath import import_release


def test_a_set_is_the_solvable_problems_and_u_set_the_vetted_candidates(engine: Engine, shared_data: Path) -> None:
    release = shared_data / "reliablemath"
    import_release(engine, release)
    aime_solve = json.loads((release / "solve" / "aime.json").read_text())
    with read_session(engine) as session:
        items = list(evaluation_items(session, data_source="aime"))
        every = list(evaluation_items(session, data_source="aime", item_set="all"))
    solvable = [item for item in items if not item.unsolvable]
    assert [item.data_id for item in solvable] == [f"aime_{i}" for i in range(len(aime_solve))]
    assert solvable[0].question == aime_solve[0]["question"] and solvable[0].candidate_id is None
    assert solvable[0].ground_truth == aime_solve[0]["ground_truth"]
    # The release holds vetted candidates only (human_check = 1), so "vetted" and "all" agree on it ...
    unsolvable = [item for item in items if item.unsolvable]
    assert unsolvable and [i.data_id for i in every if i.unsolvable] == [i.data_id for i in unsolvable]
    assert all(item.difficulty_eval in (0, 1) for item in unsolvable)
    # ... until a candidate is rejected.
    rejected = unsolvable[0]
    with write_session(engine) as session:
        session.execute(update(Candidate).where(Candidate.id == rejected.candidate_id).values(human_check=0))
    with read_session(engine) as session:
        vetted_ids = {item.data_id for item in evaluation_items(session, data_source="aime")}
    assert rejected.data_id not in vetted_ids and len(vetted_ids) == len(items) - 1


def test_items_are_found_by_data_id(engine: Engine, shared_data: Path) -> None:
    import_release(engine, shared_data / "reliablemath")
    unsol = json.loads((shared_data / "reliablemath" / "unsol" / "amc.json").read_text())
    with read_session(engine) as session:
        found = items_by_data_id(session, data_ids=["aime_0", "amc_3", unsol[0]["data_id"], "aime_9999", "nope"])
    assert set(found) == {"aime_0", "amc_3", unsol[0]["data_id"]}
    candidate = found[unsol[0]["data_id"]]
    assert candidate.unsolvable and candidate.question == unsol[0]["rewritten_question"]
    assert candidate.ground_truth == unsol[0]["ground_truth"]
    assert not found["amc_3"].unsolvable and found["amc_3"].data_source == "amc"


def test_rows_with_their_items_are_the_items_found_by_data_id(engine: Engine, shared_data: Path) -> None:
    import_release(engine, shared_data / "reliablemath")
    unsol = json.loads((shared_data / "reliablemath" / "unsol" / "amc.json").read_text())
    ids = [unsol[1]["data_id"], "aime_0", "nope", unsol[0]["data_id"], "aime_9999", "amc_3", unsol[1]["data_id"]]
    wanted = union_all(*(select(literal(n).label("n"), literal(data_id).label("data_id"))
                         for n, data_id in enumerate(ids))).subquery("wanted")
    query = select(wanted.c.n, wanted.c.data_id).order_by(wanted.c.n)
    with read_session(engine) as session:
        rows = with_items(session, query, data_id=wanted.c.data_id)
        found = items_by_data_id(session, data_ids=ids)
    # Every row naming an item, in the query's order (a repeated id twice), with the same item; the rest left out.
    assert [values for values, _ in rows] == [(n, data_id) for n, data_id in enumerate(ids) if data_id in found]
    assert [n for (n, _), _ in rows] == [0, 1, 3, 5, 6]
    assert all(item == found[data_id] for (_, data_id), item in rows)
    assert rows[1][1].candidate_id is None and rows[0][1].unsolvable
