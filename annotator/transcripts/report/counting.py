"""What the report counts, read in SQL with the items' data source, rewrite type and difficulty joined in (issue
21, item 3: the Report at 1,000,000 transcripts).

A report of few responses reads them down to the item (`verdict_groups`): the bootstrap then resamples the items
themselves. A bigger one (over `EXACT_RESPONSES`) reads what its figures need and no more (`Counts`):

- `bins`: how many items of each row's slice (model, prompt, data source, rewrite type, difficulty) have each
  [S, R, F] count (with one response per item, three bins), from one grouping in SQL; the counts of S, R and F
  are their sums, and the item bootstrap resamples from them (`uncertainty`): resampling n items with
  replacement draws each bin's items a Multinomial(n, items / n) number of times, so a resample's sums follow
  from the bins alone;
- `groups`: the reviewed responses only (few: `ix_transcript_reviewed`), for the reviews and the judge-human kappa.

`disagreement_groups`: the per-item groups of the items two or more models answered, for `where.disagreed_items`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Connection, case, func, literal_column, select
from sqlalchemy.sql import Select

from annotator._util.gc_paused import paused
from annotator.database.light_tables import REVIEWED, SEVERAL_SAMPLES, candidate, problem, transcript
from annotator.database.raw_rows import iter_raw_tuples
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

EXACT_RESPONSES = 100_000  # up to this many responses, the report reads them down to the item
_VERDICT = func.coalesce(transcript.c.human, transcript.c.judge)


class Group(NamedTuple):
    """Responses of one model and prompt on one item with one (judge, human) pair of verdicts: `count` of them.
    A named tuple: tens of thousands are made per report (a dataclass costs several times as much). `item` is
    None for a group of reviewed responses counted over a whole slice (`Counts.groups`)."""

    model: str
    prompt: str
    item: tuple[int, int] | None  # (problem_id, candidate_id), -1 for the problem itself
    data_source: str
    rewrite_type: str | None
    difficulty_eval: int | None
    unsolvable: bool
    judge: str | None
    human: str | None
    count: int


class Bin(NamedTuple):
    """`items` items of one slice on which one model and prompt gave `counts` = (S, R, F) responses."""

    model: str
    prompt: str
    data_source: str
    rewrite_type: str | None
    difficulty_eval: int | None
    unsolvable: bool
    counts: tuple[int, int, int]
    items: int


@dataclass(frozen=True)
class Counts:
    """A report's read: per-item `groups` (`bins` None), or the reviewed responses' `groups` and the `bins`;
    `one_each` when the read found no response with a second sample (every item one response per model and
    prompt: the report's intervals need no items then)."""

    groups: list[Group]
    bins: list[Bin] | None = None
    one_each: bool = False


def _joined(query: Select[Any]) -> Select[Any]:
    """`query` with each response's problem and candidate (none for a solvable problem) joined in."""
    return (query.join(problem, problem.c.id == transcript.c.problem_id)
            .outerjoin(candidate, candidate.c.id == transcript.c.candidate_id))


_ATTRIBUTES = (problem.c.data_source, candidate.c.rewrite_type, candidate.c.difficulty_eval)


def _groups(session: Session | Connection, query: Select[Any]) -> list[Group]:
    """Groups from rows (model, prompt, problem_id, candidate_id, data source, rewrite type, difficulty, judge,
    human, count)."""
    solvable = SOLVABLE_BY_DESIGN  # an item is unsolvable when it is a candidate not solvable by design
    with paused():  # a tuple per item and model, no cycle among them (`annotator._util.gc_paused`)
        return [Group(model, prompt, (problem_id, -1 if candidate_id is None else candidate_id), source, rewrite_type,
                      difficulty, candidate_id is not None and rewrite_type not in solvable, judge, human, n)
                for model, prompt, problem_id, candidate_id, source, rewrite_type, difficulty, judge, human, n
                in iter_raw_tuples(session, query)]


_PER_ITEM = (transcript.c.model, transcript.c.prompt, transcript.c.problem_id, transcript.c.candidate_id, *_ATTRIBUTES,
             transcript.c.judge, transcript.c.human)


def _per_item(where: Iterable[Any] = ()) -> Select[Any]:
    return _joined(select(*_PER_ITEM, func.count()).where(*where)).group_by(*_PER_ITEM)


def _per_response(where: Iterable[Any] = ()) -> Select[Any]:
    """`_per_item`'s columns for each response, counted 1: its groups where no item has a second sample (no
    grouping: SQLite's sort for the GROUP BY was about half of the SQL of a leaderboard's read, 56,600 responses)."""
    return _joined(select(*_PER_ITEM, literal_column("1")).where(*where))


def _model(model: str | None) -> list[Any]:
    return [] if model is None else [transcript.c.model == model]


def _one_each(session: Session | Connection, model: str | None) -> bool:
    """Whether no response of `model` (or any) has a second sample, so that each is the only one of its model,
    prompt and item: several responses of a model and prompt to one item have different samples (the unique
    key), and a sample other than 0 is one step of `ix_transcript_samples`."""
    return session.execute(select(transcript.c.id).where(literal_column(SEVERAL_SAMPLES), *_model(model))
                           .limit(1)).first() is None


def verdict_groups(session: Session | Connection, *, model: str | None = None) -> list[Group]:
    """Responses counted by everything a report row can be keyed on, down to the item (the bootstrap
    resamples items), for `report.reports(..., groups=...)` to build several breakdowns from one read. Where
    no item has a second sample each response is its own group (the same groups, read without grouping)."""
    query = _per_response if _one_each(session, model) else _per_item
    return _groups(session, query(_model(model)))


def _per_item_counts(item: Any, model: str | None, *, one_each: bool) -> Any:
    """Each item's [S, R, F] counts per model and prompt, grouped in the order of the index that `item` leads
    (candidates: `ix_transcript_candidate`, so the grouping streams in candidate order); with `one_each` (no
    item has a second sample) each response is its item's counts, and nothing needs grouping."""
    keys = (item, transcript.c.model, transcript.c.prompt)
    where = [item.is_not(None)] if item is transcript.c.candidate_id else [transcript.c.candidate_id.is_(None)]
    columns = (case((_VERDICT == verdict, 1), else_=0) for verdict in "SRF")
    if not one_each:
        columns = (func.sum(column) for column in columns)
    query = select(*keys, *(column.label(verdict) for column, verdict in zip(columns, "SRF"))).where(
        *where, *_model(model))
    return (query if one_each else query.group_by(*keys)).subquery()


def _bins(session: Session | Connection, model: str | None) -> list[Bin]:
    """Items counted by slice and [S, R, F] counts: one grouping per item, then one per slice and counts, with
    the items' attributes joined in (the candidates' from their index, merged in candidate order). Items
    without a verdict have counts (0, 0, 0): their rows show, as the per-item read's do, but count nothing."""
    one_each = _one_each(session, model)
    u = _per_item_counts(transcript.c.candidate_id, model, one_each=one_each)
    a = _per_item_counts(transcript.c.problem_id, model, one_each=one_each)
    u_keys = (u.c.model, u.c.prompt, candidate.c.data_source, candidate.c.rewrite_type, candidate.c.difficulty_eval,
              u.c.S, u.c.R, u.c.F)
    a_keys = (a.c.model, a.c.prompt, problem.c.data_source, a.c.S, a.c.R, a.c.F)
    u_rows = iter_raw_tuples(session, select(*u_keys, func.count()).join(candidate, candidate.c.id == u.c.candidate_id)
                             .group_by(*u_keys))
    bins = [Bin(m, prompt, source, rewrite_type, difficulty, rewrite_type not in SOLVABLE_BY_DESIGN,
                (int(s), int(r), int(f)), n) for m, prompt, source, rewrite_type, difficulty, s, r, f, n in u_rows]
    a_rows = iter_raw_tuples(session, select(*a_keys, func.count()).join(problem, problem.c.id == a.c.problem_id)
                             .group_by(*a_keys))
    return bins + [Bin(m, prompt, source, None, None, False, (int(s), int(r), int(f)), n)
                   for m, prompt, source, s, r, f, n in a_rows]


def _reviewed(session: Session | Connection, model: str | None) -> list[Group]:
    """The reviewed responses counted by slice and (judge, human) pair (`item` None): from their partial index
    (`ix_transcript_reviewed`), the candidates' attributes from theirs."""
    pair = (transcript.c.model, transcript.c.prompt, transcript.c.judge, transcript.c.human)
    where = [literal_column(REVIEWED), *_model(model)]
    u_keys = (*pair, candidate.c.data_source, candidate.c.rewrite_type, candidate.c.difficulty_eval)
    u_rows = iter_raw_tuples(session, select(*u_keys, func.count()).join(
        candidate, candidate.c.id == transcript.c.candidate_id).where(*where).group_by(*u_keys))
    groups = [Group(m, prompt, None, source, rewrite_type, difficulty, rewrite_type not in SOLVABLE_BY_DESIGN,
                    judge, human, n) for m, prompt, judge, human, source, rewrite_type, difficulty, n in u_rows]
    a_keys = (*pair, problem.c.data_source)
    a_rows = iter_raw_tuples(session, select(*a_keys, func.count())
                             .join(problem, problem.c.id == transcript.c.problem_id)
                             .where(*where, transcript.c.candidate_id.is_(None)).group_by(*a_keys))
    return groups + [Group(m, prompt, None, source, None, None, False, judge, human, n)
                     for m, prompt, judge, human, source, n in a_rows]


def read(session: Session | Connection, *, model: str | None = None, exact: int = EXACT_RESPONSES) -> Counts:
    """What a report counts: per item up to `exact` responses, else the reviewed ones and the bins."""
    responses = session.execute(select(func.count()).select_from(transcript).where(*_model(model))).scalar() or 0
    one_each = _one_each(session, model)
    if responses <= exact:
        return Counts(verdict_groups(session, model=model), one_each=one_each)
    return Counts(_reviewed(session, model), _bins(session, model), one_each=one_each)


_IN_BATCH = 900


def disagreement_groups(session: Session | Connection) -> list[Group]:
    """The per-item groups of every item that two or more models answered (under any prompt): the only ones
    models can disagree on. The items are found first, along the index of (data_id, model, ...) in one pass
    without a join, so that a set where no two models share an item reads nothing more."""
    several = (select(transcript.c.data_id).group_by(transcript.c.data_id)
               .having(func.min(transcript.c.model) != func.max(transcript.c.model)))
    data_ids = list(session.execute(several).scalars())
    groups: list[Group] = []
    for start in range(0, len(data_ids), _IN_BATCH):
        groups += _groups(session, _per_item([transcript.c.data_id.in_(data_ids[start : start + _IN_BATCH])]))
    return groups
