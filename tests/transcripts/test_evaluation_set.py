"""Evaluation items: ReliableMath's A set (solvable problems) and U set (vetted candidates), Section 4."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, literal, select, union_all, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate
from annotator.transcripts import evaluation_items, items_by_data_id
from annotator.transcripts.evaluation_set import _shares, with_items, within_limit
from tests.support.release import import_release


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


def test_a_limit_takes_both_sets_in_proportion_seeded(aime: Engine) -> None:
    """The AIME release: 30 solvable problems and 132 vetted candidates. A limit of 50 takes 50 x 30/162 = 9.3,
    so 9 solvable and 41 unsolvable items (not the 30 solvable first and 20 unsolvable); the same seed takes the
    same items, another seed others; the items keep their release order."""
    with read_session(aime) as session:
        items = list(evaluation_items(session, data_source="aime"))
    assert (sum(not i.unsolvable for i in items), sum(i.unsolvable for i in items)) == (30, 132)
    chosen = within_limit(items, limit=50, seed=0)
    assert (chosen.solvable, chosen.unsolvable, len(chosen.items)) == (9, 41, 50)
    assert chosen.text() == "9 solvable and 41 unsolvable items"
    assert [sum(not i.unsolvable for i in chosen.items), sum(i.unsolvable for i in chosen.items)] == [9, 41]
    assert chosen.items == [item for item in items if item in chosen.items]  # release order
    assert within_limit(items, limit=50, seed=0) == chosen
    other = within_limit(items, limit=50, seed=1)
    assert (other.solvable, other.unsolvable) == (9, 41) and other.items != chosen.items
    # A draw, not the first items of each set: the solvable ones come from all over the 30.
    assert max(int(i.data_id.rsplit("_", 1)[1]) for i in chosen.items if not i.unsolvable) >= 9
    # An item more or less leaves the others' draw alone: without the first chosen solvable item (50 x 29/161
    # is still 9), the other 8 are chosen again, and one more.
    gone = chosen.items[0]
    fewer = within_limit([item for item in items if item != gone], limit=50, seed=0)
    kept = {item for item in chosen.items if not item.unsolvable} - {gone}
    assert fewer.solvable == 9 and kept < {item for item in fewer.items if not item.unsolvable}
    # Limits at the edges: 1 item is one of the bigger set (U); 2 is one of each; none or enough is everything.
    one = within_limit(items, limit=1)
    assert (one.solvable, one.unsolvable) == (0, 1) and one.items[0].unsolvable
    assert (within_limit(items, limit=2).solvable, within_limit(items, limit=2).unsolvable) == (1, 1)
    assert within_limit(items, limit=None).items == items == within_limit(items, limit=500).items
    solvable_only = [item for item in items if not item.unsolvable]
    assert (within_limit(solvable_only, limit=5).solvable, within_limit(solvable_only, limit=5).unsolvable) == (5, 0)


@given(st.integers(0, 400), st.integers(0, 2000), st.integers(0, 3000))
def test_shares_are_proportional_and_take_both_sets(solvable: int, unsolvable: int, limit: int) -> None:
    a, u = _shares(solvable, unsolvable, limit)
    total = solvable + unsolvable
    assert a + u == min(limit, total) and 0 <= a <= solvable and 0 <= u <= unsolvable
    if solvable and unsolvable and 2 <= limit:
        assert a >= 1 and u >= 1
    if 2 <= limit < total:
        # Each set's share is its exact proportion rounded, unless that leaves a set empty.
        assert abs(a - limit * solvable / total) <= 0.5 or a == 1 or u == 1
