"""The paper's Table 2 / 10 / 11 view: per data source, candidates by rewrite type and difficulty,
checked versus vetted, and the audit's estimate. Deterministic (no time of the run, stable key order) so tools
can compare two outputs.

The totals count the candidates meant to be unsolvable; solvable-by-design ones (GSM-IC `distractor`s,
whose human_check = 1 means "answer unchanged") keep their row per rewrite type but are totalled apart, under
`solvable_by_design`, so a vetted count is never a mix of solvable and unsolvable problems.

The counts are named in the users' words (`vocabulary`): `vetted` counts the candidates `queue.vetted` holds for
(complete or adjudicated), the ones the release's `unsol` files hold; candidates whose fewer labels so far
resolve to human_check 1 are `incomplete`, not vetted.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from sqlalchemy import func, select
from sqlmodel import Session

from annotator.database.models import Candidate, Problem
from annotator.database.queries import LabelTarget, data_sources, label_state
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN, CandidateStatus, LabelState, Resolution
from annotator.labelling.audit import describe, estimate
from annotator.labelling.labels import activity
from annotator.labelling.queue import label_target, labels_wanted, vetted

SIMPLE, HARD = "simple", "hard"  # difficulty_eval 0 / 1 of the vetted ones
COUNT_KEYS: tuple[str, ...] = tuple(str(key) for key in (
    "candidates", "checked", *Resolution, LabelState.disputed, SIMPLE, HARD, LabelState.filtered, LabelState.unverified
))
# Counted by status, labelled or not (a filtered candidate someone labelled anyway is counted under both).
_STATUS_KEYS = {CandidateStatus.filtered: LabelState.filtered, CandidateStatus.unverified: LabelState.unverified}
# The states a labelled candidate is never in: the rest are "checked".
_NOT_CHECKED = (LabelState.unlabelled, LabelState.filtered, LabelState.unverified)


def _empty() -> dict[str, int]:
    return dict.fromkeys(COUNT_KEYS, 0)


class Groups(NamedTuple):
    """The candidates counted per data source, rewrite type, status, label state, resolved human_check, vetted or
    not and difficulty_eval (one pass over the candidates), under `target` (`queue.label_target`): what `compute`
    and `progress` both count from (the Overview reads it once for both)."""

    target: LabelTarget
    rows: list[tuple[Any, ...]]


def groups(session: Session) -> Groups:
    target = label_target(session)
    return Groups(target, [tuple(row) for row in _groups(session, target)])


def compute(session: Session, *, counted: Groups | None = None) -> dict[str, Any]:
    """Counts per data source and rewrite type, with per-source and overall totals.

    `checked` candidates have at least one label; of those `vetted` ones are (resolved to human_check 1 over
    `labels_per_candidate` labels, or adjudicated so; split into `simple` / `hard` by difficulty_eval),
    `incomplete` resolve to 1 over fewer labels, `rejected` to 0, and `disputed` ones are tied. `filtered`
    ones failed the LLM verification, `unverified` ones wait for it (`generate --steps 2`). `audit` is the share of
    vetted candidates truly unsolvable, from the audit sample (`audit.estimate`).
    """
    problems = dict(session.execute(select(Problem.data_source, func.count()).group_by(Problem.data_source)).all())
    sources: dict[str, dict[str, Any]] = {}
    total, solvable = _empty(), _empty()
    target, rows = counted or groups(session)
    for source, rewrite_type, status, state, human_check, is_vetted, difficulty, count in rows:
        entry = sources.setdefault(source, _source_entry())
        by_type = entry["by_rewrite_type"].setdefault(rewrite_type, _empty())
        apart = rewrite_type in SOLVABLE_BY_DESIGN
        totals = (entry["solvable_by_design"], solvable) if apart else (entry["total"], total)
        for counts in (by_type, *totals):
            _count(counts, count, status=status, state=state, human_check=human_check, is_vetted=is_vetted,
                   difficulty=difficulty)
    ordered = data_sources(session) + sorted(set(sources) - set(problems))
    result_sources = {}
    for source in ordered:
        entry = sources.get(source, _source_entry())
        result_sources[source] = {
            "problems": problems.get(source, 0),
            "by_rewrite_type": dict(sorted(entry["by_rewrite_type"].items())),
            "total": entry["total"],
            "solvable_by_design": entry["solvable_by_design"],
        }
    return {
        "problems": sum(problems.values()), "labels_per_candidate": target.labels,
        "imported_labels_count": target.count_imported, "sources": result_sources, "total": total,
        "solvable_by_design": solvable, "audit": estimate(session),
    }


def _count(counts: dict[str, int], count: int, *, status: str, state: str, human_check: int | None,
           is_vetted: bool, difficulty: int | None) -> None:
    """Add `count` candidates of one group to `counts` (a `COUNT_KEYS` dict)."""
    counts["candidates"] += count
    if status in _STATUS_KEYS:
        counts[_STATUS_KEYS[status]] += count
    if state in _NOT_CHECKED:
        return
    counts["checked"] += count
    if human_check == 1 and is_vetted:
        counts[Resolution.vetted] += count
        counts[HARD if difficulty == 1 else SIMPLE] += count
    elif human_check == 1:
        counts[Resolution.incomplete] += count
    elif human_check == 0:
        counts[Resolution.rejected] += count
    else:
        counts[LabelState.disputed] += count


def _groups(session: Session, target: LabelTarget) -> Any:
    """Candidates counted per data source, rewrite type, status, label state (`queries.label_state`), resolved
    human_check, vetted or not and difficulty_eval."""
    state = label_state(target).label("state")
    is_vetted = vetted(target).label("vetted")
    group = (Candidate.data_source, Candidate.rewrite_type, Candidate.status, state, Candidate.human_check,
             is_vetted, Candidate.difficulty_eval)
    return session.execute(select(*group, func.count()).group_by(*group))


def _source_entry() -> dict[str, Any]:
    return {"by_rewrite_type": {}, "total": _empty(), "solvable_by_design": _empty()}


def to_json(stats: dict[str, Any]) -> str:
    return json.dumps(stats, indent=2, ensure_ascii=False)


def rows(stats: dict[str, Any], *, missing: str | None = None) -> list[dict[str, Any]]:
    """One row per data source and rewrite type, plus per-source and overall totals, for tables: `all` for
    the unsolvable-by-design candidates, `solvable by design` (only where there are any) for the others.

    Problems are counted per data source, not per rewrite type: those rows have None there, or, when `missing`
    is given (a dash for the app), every `problems` cell is text and those rows hold `missing`.
    """

    def problems(count: int | None) -> int | str | None:
        if missing is None:
            return count
        return missing if count is None else str(count)

    table = []
    for source, entry in stats["sources"].items():
        for rewrite_type, counts in entry["by_rewrite_type"].items():
            table.append({"data_source": source, "rewrite_type": rewrite_type, "problems": problems(None), **counts})
        table.append(
            {"data_source": source, "rewrite_type": "all", "problems": problems(entry["problems"]), **entry["total"]}
        )
        table.extend(_solvable_row(source, entry["solvable_by_design"], problems(None)))
    overall = {"data_source": "all", "rewrite_type": "all", "problems": problems(stats["problems"])}
    table.append({**overall, **stats["total"]})
    table.extend(_solvable_row("all", stats["solvable_by_design"], problems(None)))
    return table


def _solvable_row(source: str, counts: dict[str, int], problems: int | str | None) -> list[dict[str, Any]]:
    """`solvable by design` (distractors): totalled apart from the unsolvable candidates, where there are any."""
    if not counts["candidates"]:
        return []
    return [{"data_source": source, "rewrite_type": "solvable by design", "problems": problems, **counts}]


# The states a candidate is in, for the Overview's chart (each candidate in exactly one), in the chart's order.
STATES = tuple(state.value for state in LabelState)


def progress(session: Session, *, counted: Groups | None = None) -> dict[str, list[dict[str, Any]]]:
    """Where the work stands, as rows for charts: `states` counts the candidates per data source, rewrite type
    and state (`STATES`; rows with a count only), `per_day` the labels people gave per day (imports left out).
    `counted` is `groups`' reading when the caller has one (else it is read here)."""
    counts: dict[tuple[str, str, str], int] = {}
    rows = (counted or groups(session)).rows
    for source, rewrite_type, _status, state, _human_check, _is_vetted, _difficulty, count in rows:
        key = (source, rewrite_type, state)
        counts[key] = counts.get(key, 0) + count
    states = [
        {"data_source": source, "rewrite_type": rewrite_type, "state": state, "candidates": count}
        for (source, rewrite_type, state), count in sorted(counts.items(), key=lambda kv: (*kv[0][:2],
                                                                                            STATES.index(kv[0][2])))
    ]
    per_day: dict[str, int] = {}
    for person in activity(session).values():
        for day, count in person["per_day"].items():
            per_day[day] = per_day.get(day, 0) + count
    return {"states": states, "per_day": [{"day": day, "labels": n} for day, n in sorted(per_day.items())]}


def to_text(stats: dict[str, Any]) -> str:
    header = ["data_source", "rewrite_type", "problems", *COUNT_KEYS]
    body = [[("" if row[key] is None else str(row[key])) for key in header] for row in rows(stats)]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(cell.ljust(w) for cell, w in zip(r, widths)) for r in body)
    target = labels_wanted(stats["labels_per_candidate"], count_imported=stats.get("imported_labels_count", True))
    lines.append(f"vetted: {target} resolving to human_check = 1, or adjudicated so; incomplete = "
                 "resolving to 1 over fewer labels (export --include-incomplete adds them)")
    if "audit" in stats:
        lines.append(f"audit: {describe(stats['audit'])}")
    return "\n".join(lines)
