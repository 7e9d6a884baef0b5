"""Precision and Prudence per model and prompt (ReliableMath Section 4, Eq. 1-2; Tables 3 and 6-9).

Prec(A) = AS/A and Prud(A) = AR/A over the solvable items' responses, likewise for the unsolvable items (U);
Prec and Prud are the means of the two. Counts use each response's effective verdict: the human one where a
reviewer gave one, else the judge's. `judge_human_kappa` is Cohen's kappa of judge against human over the
reviewed responses (None when undefined, e.g. no reviewed response or one verdict only).

The responses are read in SQL (`counting`): down to the item for a small report, by slice and item bins for a
big one. Rows are per (model, prompt) and, with `by`, per value of each breakdown (`data_source`, `rewrite_type`,
`difficulty_eval`), plus the pooled row (`"all"`). The breakdowns by `rewrite_type` and `difficulty_eval` only
split the U set; each of their rows keeps the A set of its data source, so that Prec and Prud stay defined.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, func, literal_column, select

from annotator._util.gc_paused import paused
from annotator.database.light_tables import QUEUE_PART, transcript
from annotator.database.vocabulary import Verdict
from annotator.transcripts.report.counting import Bin, Counts, Group, read
from annotator.transcripts.report.uncertainty import CI_KEYS, RESAMPLES, Bins, Items, add_intervals

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

BREAKDOWNS = ("data_source", "rewrite_type", "difficulty_eval")
_U_ONLY = ("rewrite_type", "difficulty_eval")
ALL = "all"
VERDICTS = tuple(v.value for v in Verdict)
KEYS = ("model", "prompt", "data_source", "A", "AS", "AR", "AF", "U", "US", "UR", "UF",
        "prec_a", "prud_a", "prec_u", "prud_u", "prec", "prud", *CI_KEYS, "ci_note", "ci_method", "reviewed",
        "judge_human_kappa")


@dataclass
class _Tally:
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # "AS", "UF", ...
    pairs: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))  # (judge, human)
    reviewed: int = 0
    items: Items = field(default_factory=dict)  # per (unsolvable, item): [S, R, F] (`uncertainty`)
    bins: Bins = field(default_factory=dict)  # or per (unsolvable, (S, R, F)): items (`counting.Counts.bins`)


def check_by(by: Sequence[str]) -> tuple[str, ...]:
    """The breakdowns asked for, in the canonical order; ValueError naming the choices for an unknown one."""
    unknown = [name for name in by if name not in BREAKDOWNS]
    if unknown:
        raise ValueError(f"cannot break down by {', '.join(unknown)}; choose from {', '.join(BREAKDOWNS)}")
    return tuple(name for name in BREAKDOWNS if name in by)


_ANY = ("any",)  # stands for every value of a U-only breakdown in an A response's key


def _keyer(by: tuple[str, ...]) -> Callable[[Group | Bin], tuple[Any, ...]]:
    """The breakdown row a group counts in, as a function made once per breakdown (it runs once per group):
    the group's values of `by`; an A response has none (`_ANY`) for the U-only ones."""
    values = attrgetter(*by)
    u_only = tuple(name in _U_ONLY for name in by)
    if len(by) == 1:
        if u_only[0]:
            return lambda group: (values(group),) if group.unsolvable else (_ANY,)
        return lambda group: (values(group),)
    return lambda group: values(group) if group.unsolvable else tuple(
        _ANY if u else value for u, value in zip(u_only, values(group)))


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _mean(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else (a + b) / 2


def _kappa(pairs: dict[tuple[str, str], int]) -> float | None:
    if not pairs:
        return None
    from annotator.figures.agreement.cohen import (
        cohen,  # only with reviews: the metrics package is not `report`'s start-up
    )

    judge = np.repeat([VERDICTS.index(j) for j, _ in pairs], list(pairs.values()))
    human = np.repeat([VERDICTS.index(h) for _, h in pairs], list(pairs.values()))
    kappa, _reason = cohen(judge, human, list(range(len(VERDICTS))))
    return kappa


def _row(model: str, prompt: str, values: dict[str, Any], tally: _Tally, by: tuple[str, ...]) -> dict[str, Any]:
    """One row; `values` are its breakdown values (none for the pooled row)."""
    c = tally.counts
    a = c["AS"] + c["AR"] + c["AF"]
    u = c["US"] + c["UR"] + c["UF"]
    prec_a, prud_a, prec_u, prud_u = _ratio(c["AS"], a), _ratio(c["AR"], a), _ratio(c["US"], u), _ratio(c["UR"], u)
    return {
        "model": model, "prompt": prompt, "data_source": values.get("data_source", ALL),
        "A": a, "AS": c["AS"], "AR": c["AR"], "AF": c["AF"], "U": u, "US": c["US"], "UR": c["UR"], "UF": c["UF"],
        "prec_a": prec_a, "prud_a": prud_a, "prec_u": prec_u, "prud_u": prud_u,
        "prec": _mean(prec_a, prec_u), "prud": _mean(prud_a, prud_u),
        **dict.fromkeys(CI_KEYS), "ci_note": None, "ci_method": None,  # filled in by `uncertainty.add_intervals`
        "reviewed": tally.reviewed, "judge_human_kappa": _kappa(tally.pairs),
        **{name: values.get(name, ALL) for name in by if name in _U_ONLY},
    }


_COLUMN = {"S": 0, "R": 1, "F": 2}  # a verdict's place in an item's [S, R, F]


def _add(tally: _Tally, group: Group, items: bool = True, counts: bool = True) -> None:
    """A group's responses into the tally: their verdicts (unless `counts`: the bins have them), their item's
    counts (with `items`; none for a group of a whole slice), their reviews."""
    # Unpacked once (a named tuple's attributes cost a call each): this runs once per item of a report.
    _model, _prompt, item, _source, _type, _difficulty, unsolvable, judge, human, n = group
    verdict = human or judge
    if verdict is None:  # never judged (a collection still running): counts nowhere
        return
    if counts:
        tally.counts[("U" if unsolvable else "A") + verdict] += n
    if items and item is not None:  # only the intervals need them
        key = (unsolvable, item)
        cell = tally.items.get(key)
        if cell is None:
            cell = tally.items[key] = [0, 0, 0]
        cell[_COLUMN[verdict]] += n
    if human is not None:
        tally.reviewed += n
        if judge is not None:
            tally.pairs[(judge, human)] += n


def _add_bin(tally: _Tally, bin_: Bin) -> None:
    part = "U" if bin_.unsolvable else "A"
    for verdict, n in zip(VERDICTS, bin_.counts):
        tally.counts[part + verdict] += n * bin_.items
    if any(bin_.counts):  # items never judged count nowhere (their row shows, as with per-item groups)
        key = (bin_.unsolvable, bin_.counts)
        tally.bins[key] = tally.bins.get(key, 0) + bin_.items


def _as_counts(groups: Iterable[Group] | Counts | None, session: Session | Connection, model: str | None) -> Counts:
    if groups is None:
        return read(session, model=model)
    return groups if isinstance(groups, Counts) else Counts(list(groups))


def tallies(groups: Iterable[Group] | Counts, *, items: bool = True) -> dict[tuple[str, str], _Tally]:
    """The pooled counts of each (model, prompt), with `items` down to the items (the bootstrap's, and
    `uncertainty.compare`'s; from per-item groups) or their bins."""
    read_ = groups if isinstance(groups, Counts) else Counts(list(groups))
    pooled: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    counts = read_.bins is None
    for group in read_.groups:
        _add(pooled[group[:2]], group, items, counts)  # group[:2]: (model, prompt)
    for bin_ in read_.bins or ():
        _add_bin(pooled[(bin_.model, bin_.prompt)], bin_)
    return pooled


def _sample(tally: _Tally) -> Items | Bins:
    """What the bootstrap resamples for a row: its items, or their bins."""
    return tally.bins if tally.bins else tally.items


def report(
    session: Session | Connection, *, model: str | None = None, by: Sequence[str] = (),
    groups: Iterable[Group] | Counts | None = None, resamples: int = RESAMPLES, seed: int = 0,
) -> list[dict[str, Any]]:
    """Rows of counts, Precision, Prudence, their intervals, reviews and judge-human kappa (keys `KEYS`, plus a
    column for each of `rewrite_type` / `difficulty_eval` asked for in `by`), sorted by model, prompt and
    breakdown values with the pooled row (`"all"`) of each model and prompt first. `groups` (from
    `counting.read` or `counting.verdict_groups`) saves the read when several breakdowns are wanted.
    Intervals: Wilson for the four proportions; for Prec and Prud, MOVER over those where each item has one
    response, else a percentile bootstrap of `resamples` resamples (0: none) seeded with `seed`
    (`annotator.transcripts.report.uncertainty`; the row's `ci_method` says which)."""
    [rows] = reports(session, breakdowns=[by], model=model, groups=groups, resamples=resamples, seed=seed)
    return rows


def reports(
    session: Session | Connection, *, breakdowns: Sequence[Sequence[str]], model: str | None = None,
    groups: Iterable[Group] | Counts | None = None, resamples: int = RESAMPLES, seed: int = 0,
) -> list[list[dict[str, Any]]]:
    """`report`'s rows for each breakdown in `breakdowns` (e.g. `[["data_source"], ["rewrite_type"]]`), from
    one read and one bootstrap: what the breakdowns share (the pooled rows, the A set each U row keeps) is
    counted and resampled once. A row's figures and intervals are those `report` gives it alone."""
    checked = [check_by(by) for by in breakdowns]
    with paused():  # tens of thousands of tuples and lists, no cycle among them (`annotator._util.gc_paused`)
        counts = _as_counts(groups, session, model)
        # Down to the items unless the read found one response per item: whether an item has several decides
        # Prec and Prud's interval (MOVER needs the counts alone).
        items = not counts.one_each
        pooled = tallies(counts, items=items)
        parts = [_rows(counts, pooled, by, items=items) for by in checked]
        add_intervals([row for part in parts for row in part], resamples=resamples, seed=seed,
                      one_each=counts.one_each)
        return [sorted((row for row, _ in part), key=_order) for part in parts]


def _rows(
    counts: Counts, pooled: dict[tuple[str, str], _Tally], by: tuple[str, ...], *, items: bool
) -> list[tuple[dict[str, Any], Items | Bins]]:
    """The pooled rows and those of the breakdown `by`, each with its items' counts (for the intervals)."""
    broken: dict[tuple[Any, ...], _Tally] = defaultdict(_Tally)
    if by:
        key = _keyer(by)
        for group in counts.groups:
            _add(broken[(group.model, group.prompt, *key(group))], group, items, counts=counts.bins is None)
        for bin_ in counts.bins or ():
            _add_bin(broken[(bin_.model, bin_.prompt, *key(bin_))], bin_)
    rows = [(_row(m, prompt, {}, tally, by), _sample(tally)) for (m, prompt), tally in pooled.items()]
    for key, tally in broken.items():
        values = dict(zip(by, key[2:]))
        if _ANY in values.values():
            continue  # A responses: counted in each U row of their slice below
        a_key = (*key[:2], *(_ANY if name in _U_ONLY else values[name] for name in by))
        if a_key != key and a_key in broken:
            tally = _merged(tally, broken[a_key])
        rows.append((_row(key[0], key[1], values, tally, by), _sample(tally)))
    return rows


def _merged(u_part: _Tally, a_part: _Tally) -> _Tally:
    merged = _Tally()
    for part in (u_part, a_part):
        for name, n in part.counts.items():
            merged.counts[name] += n
        for pair, n in part.pairs.items():
            merged.pairs[pair] += n
        merged.reviewed += part.reviewed
        merged.items.update(part.items)  # the U part's items and the A part's: no item in both
        merged.bins.update(part.bins)  # likewise (unsolvable is the bins' first key)
    return merged


def _order(row: dict[str, Any]) -> tuple[Any, ...]:
    def rank(value: Any) -> tuple[int, str]:
        return (0, "") if value == ALL else (1, str(value))

    return (row["model"], row["prompt"], rank(row["data_source"]),
            *(rank(row[name]) for name in _U_ONLY if name in row))


def rules_disagree(session: Session | Connection, *, model: str | None = None) -> int:
    """How many responses' verdicts differ between the two rule sets."""
    # The rule sets' disagreements are parts 0 and 3 of the review queue: a range of its index, not a full read.
    query = select(func.count()).select_from(transcript).where(literal_column(QUEUE_PART).in_((0, 3)))
    if model is not None:
        query = query.where(transcript.c.model == model)
    return int(session.execute(query).scalar() or 0)


PAPER_FIGURES = (("prec_a", "Prec(A)"), ("prud_a", "Prud(A)"), ("prec_u", "Prec(U)"), ("prud_u", "Prud(U)"),
                 ("prec", "Prec"), ("prud", "Prud"))


METHODS = {"mover-wilson": "MOVER over the Wilson intervals of A and U (one response per item)",
           "bootstrap": "a bootstrap over items (several responses per item)"}


def interval_methods(rows: Iterable[dict[str, Any]]) -> str:
    """How Prec and Prud's intervals of these rows were made (`ci_method`), in words; both when none has one."""
    used = {row.get("ci_method") for row in rows}
    return " or ".join(text for name, text in METHODS.items() if name in used) or " or ".join(METHODS.values())


def interval_text(interval: Sequence[float] | None) -> str:
    """An interval as people read it next to its figure: "[0.49, 0.81]"; "—" when undefined."""
    return "—" if interval is None else f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def paper_layout(rows: Iterable[dict[str, Any]], *, intervals: bool = False) -> list[dict[str, Any]]:
    """Rows as the paper's Tables 3 and 6-9 lay them out: S/R/F counts as text ("21/0/9") beside Prec. and
    Prud. of A, then of U, then both; with the reviews and judge-human kappa after them. With `intervals`, each
    figure is followed by its 95% interval as text ("Prec(A) 95% CI": "[0.52, 0.83]")."""
    laid_out = []
    for row in rows:
        figures = dict(PAPER_FIGURES)
        out: dict[str, Any] = {"model": row["model"], "prompt": row["prompt"], "data_source": row["data_source"]}
        out.update({name: row[name] for name in _U_ONLY if name in row})
        for part in ("A", "U", None):
            if part:
                out[f"{part} S/R/F"] = f"{row[part + 'S']}/{row[part + 'R']}/{row[part + 'F']}"
            for name in ((f"prec_{part.lower()}", f"prud_{part.lower()}") if part else ("prec", "prud")):
                out[figures[name]] = row[name]
                if intervals:
                    out[f"{figures[name]} 95% CI"] = interval_text(row[f"{name}_ci"])
        out["reviewed"], out["kappa"] = row["reviewed"], row["judge_human_kappa"]
        laid_out.append(out)
    return laid_out
