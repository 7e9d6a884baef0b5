"""The items of an evaluation set: ReliableMath's A set (solvable problems) and U set (vetted candidates).

An item's `data_id` is a candidate's `data_id` for an unsolvable item and `{data_source}_{position}` for a
solvable problem (`aime_0` is the first record of `solve/aime.json`), so transcripts made elsewhere can name
the item they answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import ColumnElement, Select, select, tuple_
from sqlmodel import Session

from annotator.database import queries
from annotator.database.models import Candidate, Problem
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN
from annotator.labelling.queue import label_target, vetted

ItemSet = Literal["vetted", "all"]
_IN_CHUNK = 900


@dataclass(frozen=True)
class Item:
    """One question put to a model, with what the judge needs to score the answer."""

    data_id: str
    problem_id: int
    candidate_id: int | None  # None for a solvable problem (A set)
    data_source: str
    question: str  # what the model is asked: the rewritten question for a candidate
    ground_truth: Any  # the original problem's answer (on an unsolvable item, giving it is a failure)
    unsolvable: bool
    rewrite_type: str | None = None
    difficulty_eval: int | None = None
    treecut: bool = False  # TreeCut items use TreeCut's prompt and its "Answer: unknown" rule


def problem_data_id(data_source: str, position: int) -> str:
    """A solvable problem's item id, `{data_source}_{position}`."""
    return f"{data_source}_{position}"


def _is_treecut(extra: dict[str, Any] | None) -> bool:
    return bool(extra) and "treecut" in extra  # type: ignore[operator]


def _answerable(extra: dict[str, Any] | None) -> bool:
    """False for the placeholder problem an unanswerable-only TreeCut file gets (it has no answer to ask for)."""
    return not (extra and extra.get("treecut", {}).get("answerable") is False)


def _problem_item(row: dict[str, Any]) -> Item:
    return Item(
        data_id=problem_data_id(row["data_source"], row["position"]),
        problem_id=row["id"],
        candidate_id=None,
        data_source=row["data_source"],
        question=row["question"],
        ground_truth=row["ground_truth"],
        unsolvable=False,
        treecut=_is_treecut(row["extra"]),
    )


def _candidate_item(row: dict[str, Any]) -> Item:
    question, answer = queries.original_question_and_answer(row)
    return Item(
        data_id=row["data_id"],
        problem_id=row["problem_id"],
        candidate_id=row["id"],
        data_source=row["data_source"],
        question=row["rewritten_question"],
        ground_truth=answer,
        unsolvable=row["rewrite_type"] not in SOLVABLE_BY_DESIGN,
        rewrite_type=row["rewrite_type"],
        difficulty_eval=row["difficulty_eval"],
        treecut=_is_treecut(row["extra"]),
    )


_ITEM_CANDIDATE_COLUMNS = (*queries.CANDIDATE_COLUMNS, Candidate.problem_id)


def evaluation_items(
    session: Session, *, data_source: str | None = None, item_set: ItemSet = "vetted"
) -> Iterator[Item]:
    """The A set (every answerable problem) then the U set, in release order.

    `vetted` takes the vetted candidates (`queue.vetted`, ReliableMath's U set); `all` takes every candidate.
    """
    query = select(*queries.PROBLEM_COLUMNS).order_by(Problem.id)
    if data_source is not None:
        query = query.where(Problem.data_source == data_source)
    for row in session.execute(query):
        if _answerable(row.extra):
            yield _problem_item(row._asdict())
    only = vetted(label_target(session)) if item_set == "vetted" else None
    candidates = queries.candidates_query(data_source=data_source, where=only, columns=_ITEM_CANDIDATE_COLUMNS)
    for row in session.execute(candidates):
        yield _candidate_item(row._asdict())


def _shares(solvable: int, unsolvable: int, limit: int) -> tuple[int, int]:
    """How many solvable and unsolvable items a limit takes: in proportion to the sets' sizes (rounded), at least
    one of each when both sets have items and the limit is 2 or more; a limit of 1 takes one item of the bigger
    set (of the solvable one on a tie)."""
    if limit >= solvable + unsolvable:
        return solvable, unsolvable
    if not solvable or not unsolvable:
        return min(limit, solvable), min(limit, unsolvable)
    if limit < 1:
        return 0, 0
    if limit < 2:
        return (1, 0) if solvable >= unsolvable else (0, 1)
    a = min(max(int(limit * solvable / (solvable + unsolvable) + 0.5), 1), limit - 1)
    a = max(min(a, solvable), limit - unsolvable)  # neither set asked for more items than it has
    return a, limit - a


def _rank(seed: int, item: Item) -> bytes:
    """An item's place in the seeded draw: a hash of the seed and its data_id, the same in every process and
    for every set the item is in (items added later take their own places, leaving the others' order)."""
    return hashlib.blake2b(f"{seed}\0{item.data_id}".encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Selection:
    """The items a run asks, in release order, with how many of each set."""

    items: list[Item]
    solvable: int
    unsolvable: int

    def text(self) -> str:
        return f"{self.solvable} solvable and {self.unsolvable} unsolvable items"


def within_limit(items: Iterable[Item], *, limit: int | None, seed: int = 0) -> Selection:
    """At most `limit` of the items (all without one): the solvable (A) and unsolvable (U) sets in proportion to
    their sizes, at least one of each when both have items and `limit` is 2 or more (`_shares`); within each set
    the items first in a draw seeded by `seed` (`_rank`), so the same seed takes the same items again and a
    re-run resumes them. The chosen items keep their release order."""
    every = list(items)
    parts = ([item for item in every if not item.unsolvable], [item for item in every if item.unsolvable])
    if limit is not None and limit < len(every):
        shares = _shares(len(parts[0]), len(parts[1]), limit)
        chosen = {id(item) for part, n in zip(parts, shares) for item in sorted(part, key=lambda i: _rank(seed, i))[:n]}
        every = [item for item in every if id(item) in chosen]
    unsolvable = sum(item.unsolvable for item in every)
    return Selection(every, len(every) - unsolvable, unsolvable)


def items_by_data_id(session: Session, *, data_ids: Collection[str]) -> dict[str, Item]:
    """The items these ids name (candidates first, then `{data_source}_{position}` problems); ids that name
    nothing are missing from the result."""
    wanted = set(data_ids)
    found: dict[str, Item] = {}
    ids = sorted(wanted)
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = ids[start : start + _IN_CHUNK]
        query = queries.candidates_query(columns=_ITEM_CANDIDATE_COLUMNS, order="id")
        query = query.where(Candidate.data_id.in_(chunk))
        for row in session.execute(query):
            found[row.data_id] = _candidate_item(row._asdict())
    problem_keys = []
    for data_id in wanted - found.keys():
        source, _, position = data_id.rpartition("_")
        if source and position.isdigit():
            problem_keys.append((source, int(position)))
    for start in range(0, len(problem_keys), _IN_CHUNK):
        chunk_keys = problem_keys[start : start + _IN_CHUNK]
        query = select(*queries.PROBLEM_COLUMNS).where(tuple_(Problem.data_source, Problem.position).in_(chunk_keys))
        for row in session.execute(query):
            if _answerable(row.extra):
                item = _problem_item(row._asdict())
                found[item.data_id] = item
    return found


def with_items(
    session: Session, query: Select[Any], *, data_id: ColumnElement[str]
) -> list[tuple[tuple[Any, ...], Item]]:
    """The rows of `query` (e.g. reviewed transcripts), each with the item its `data_id` column names, in the
    query's order; rows naming no item are left out. The same items as `items_by_data_id`, read in one statement
    with the rows (their candidates joined on `data_id`, one index lookup each, instead of thousands of ids sent
    back in chunks); only ids naming no candidate (solvable problems, or nothing) are looked up after."""
    own = len(query.selected_columns)
    joined = (
        query.add_columns(*_ITEM_CANDIDATE_COLUMNS)
        .outerjoin(Candidate, Candidate.data_id == data_id)
        .outerjoin(Problem, Problem.id == Candidate.problem_id)
    )
    names = [column.key for column in _ITEM_CANDIDATE_COLUMNS]  # the result's own names repeat the query's
    rows: list[tuple[tuple[Any, ...], Item | None]] = []
    for row in session.connection().execute(joined):  # Core rows: no ORM loading for thousands of them
        values = tuple(row)
        candidate = dict(zip(names, values[own:]))
        rows.append((values[:own], _candidate_item(candidate) if candidate["id"] is not None else None))
    position = list(query.selected_columns).index(data_id)
    missing = {values[position] for values, item in rows if item is None}
    problems = items_by_data_id(session, data_ids=missing) if missing else {}
    return [
        (values, item or problems[values[position]])
        for values, item in rows
        if item is not None or values[position] in problems
    ]
