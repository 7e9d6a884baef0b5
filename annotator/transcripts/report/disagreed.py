"""Where models hallucinate (issue 20, item 5): the items models disagree on most, and their transcripts.

Prec and Prud by rewrite type and by difficulty_eval, with their intervals, are `report.report(..., by=...)`
(`report.reports` for several at once; ReliableMath Section 4.2, Fig. 5 plots Prec(U) those two ways); the tags
per model are `review.tag_counts`. This module adds the items the models disagree on.

Disagreement of one item under one prompt, answered by K >= 2 models: the chance that two different models,
each giving one of its responses on the item at random, get different verdicts (S, R, F: the effective ones,
a reviewer's where given). With p_m(c) model m's share of its responses on the item in class c,

    disagreement = 1 - sum over ordered pairs m != m' of sum_c p_m(c) p_m'(c) / (K (K - 1)).

With one response per model it is the share of the model pairs whose verdicts differ: 0 when all agree, 1 when
no two agree (three models answering S, R and F; two answering S and F); models S, S, F give 2/3 (two of the
three pairs differ). Each model weighs the same however many samples it has. A model that varies between its
own samples adds to the figure as often as its responses differ from the others' (S and F in equal parts
against a model answering S: 1/2), but its samples are never compared with each other. Ties are ordered by the
number of models (more first), then by prompt and data_id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Transcript
from annotator.transcripts.report.counting import Counts, Group, disagreement_groups
from annotator.transcripts.report.scores import VERDICTS
from annotator.transcripts.review.decisions import effective_verdict, load_review

DISAGREED = 20  # items on the Report page and `report --disagreed`'s default


def disagreement(counts: Sequence[Sequence[int]]) -> float | None:
    """The disagreement (module docstring) of models with these [S, R, F] response counts on one item; None
    for fewer than two models with a response."""
    shares = [[n / sum(row) for n in row] for row in counts if sum(row)]
    k = len(shares)
    if k < 2:
        return None
    totals = [sum(column) for column in zip(*shares)]
    # Sum over ordered pairs m != m' of p_m . p_m' = |sum of p_m|^2 - sum of |p_m|^2.
    same = sum(t * t for t in totals) - sum(p * p for row in shares for p in row)
    return max(0.0, 1.0 - same / (k * (k - 1)))  # max: rounding must not show -0.0000000001


def verdict_text(counts: Sequence[int]) -> str:
    """A model's verdicts on one item as people read them: "S" for one response, "S 2 · F 1" for several."""
    if sum(counts) == 1:
        return VERDICTS[list(counts).index(1)]
    return " · ".join(f"{verdict} {n}" for verdict, n in zip(VERDICTS, counts) if n)


def verdicts_text(verdicts: dict[str, dict[str, int]]) -> str:
    """Every model's verdicts on one item (a `disagreed_items` row's `verdicts`) on one line: "a: S; b: S 2 · F 1"."""
    return "; ".join(f"{model}: {verdict_text([counts[v] for v in VERDICTS])}" for model, counts in verdicts.items())


def _per_item(groups: Iterable[Group]) -> tuple[dict[tuple[Any, ...], dict[str, list[int]]], dict[Any, Group]]:
    """{(prompt, item): {model: [S, R, F]}} and one group of each item (its data source, type, difficulty)."""
    counts: dict[tuple[Any, ...], dict[str, list[int]]] = defaultdict(dict)
    example: dict[Any, Group] = {}
    for group in groups:
        verdict = effective_verdict(human=group.human, judge=group.judge)
        if verdict is None:  # not judged yet: no verdict to disagree with
            continue
        row = counts[(group.prompt, group.item)].setdefault(group.model, [0, 0, 0])
        row[VERDICTS.index(verdict)] += group.count
        example.setdefault(group.item, group)
    return counts, example


def _item_groups(session: Session, groups: Iterable[Group] | Counts | None) -> Iterable[Group]:
    """Per-item groups: those given, or of the items several models answered (a big report's read has none)."""
    if groups is None or (isinstance(groups, Counts) and groups.bins is not None):
        return disagreement_groups(session)
    return groups.groups if isinstance(groups, Counts) else groups


def disagreed_items(
    session: Session, *, limit: int = DISAGREED, groups: Iterable[Group] | Counts | None = None
) -> list[dict[str, Any]]:
    """The `limit` items the models disagree on most, most first (an item under each prompt counts apart); only
    items with some disagreement. Each: data_id, prompt, data_source, rewrite_type (None: a solvable problem),
    difficulty_eval, unsolvable, problem_id and candidate_id (None for a solvable problem: to open the
    transcripts), models (how many answered), disagreement, and `verdicts`: {model: {"S": n, "R": n, "F": n}}
    by model name.
    `groups` (from `counting.read` or `counting.verdict_groups`) saves the read."""
    counts, example = _per_item(_item_groups(session, groups))
    scored = []  # (rank, prompt, item, figure); rank: higher figure, then more models, first
    for (prompt, item), models in counts.items():
        score = disagreement(list(models.values()))
        if score:  # None (one model) or 0 (all agree): nothing to look at
            # Rounded for the rank: 2/3 reached by two routes of arithmetic is one tie.
            scored.append(((-round(score, 9), -len(models)), prompt, item, score))
    scored.sort(key=lambda entry: entry[0])
    # Ties are broken by prompt and data_id, read for the few kept: those tied with the last one kept go along.
    cut = [entry for entry in scored if entry[0] <= scored[limit - 1][0]] if len(scored) > limit else scored
    data_ids = _data_ids(session, [entry[2] for entry in cut])
    cut.sort(key=lambda entry: (entry[0], entry[1], data_ids[entry[2]]))
    rows = []
    for _, prompt, item, score in cut[:limit]:
        group = example[item]
        models = counts[(prompt, item)]
        rows.append({
            "data_id": data_ids[item], "prompt": prompt, "data_source": group.data_source,
            "rewrite_type": group.rewrite_type, "difficulty_eval": group.difficulty_eval,
            "unsolvable": group.unsolvable, "problem_id": item[0], "candidate_id": None if item[1] < 0 else item[1],
            "models": len(models), "disagreement": score,
            "verdicts": {model: dict(zip(VERDICTS, n)) for model, n in sorted(models.items())},
        })
    return rows


def _data_ids(session: Session, items: Sequence[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """The data_id of each (problem_id, candidate_id or -1), as the transcripts give it."""
    found: dict[tuple[int, int], str] = {}
    problems = sorted({problem_id for problem_id, _ in items})
    for start in range(0, len(problems), 900):
        query = select(Transcript.problem_id, Transcript.candidate_id, Transcript.data_id).distinct().where(
            Transcript.problem_id.in_(problems[start : start + 900]))
        for problem_id, candidate_id, data_id in session.execute(query):
            found[(problem_id, -1 if candidate_id is None else candidate_id)] = data_id
    return found


_SIDE_BY_SIDE = (
    Transcript.id, Transcript.model, Transcript.prompt, Transcript.sample, Transcript.response, Transcript.reasoning,
    Transcript.extracted_answer, Transcript.judge_rule, Transcript.judge_class, Transcript.judge,
    Transcript.rules_disagree, Transcript.human, Transcript.tags,
)


def item_transcripts(
    session: Session, *, problem_id: int, candidate_id: int | None, prompt: str
) -> dict[str, Any] | None:
    """One item's transcripts under one prompt, to read side by side: `item` (as `review.load_review` gives
    it: the question, the ground truth, the candidate's fields), `data_id`, `candidate_id` (None: a solvable
    problem), `prompt` and `models`: {model: [transcript, ...]} by model name, each model's by sample, each
    transcript with its `verdict` (the effective one). None when the item has no transcript under the prompt."""
    query = select(*_SIDE_BY_SIDE).where(Transcript.problem_id == problem_id, Transcript.prompt == prompt)
    query = query.where(Transcript.candidate_id.is_(None) if candidate_id is None
                        else Transcript.candidate_id == candidate_id)
    rows = [row._asdict() for row in session.execute(query.order_by(Transcript.model, Transcript.sample))]
    if not rows:
        return None
    models: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        row["verdict"] = effective_verdict(human=row["human"], judge=row["judge"])
        models.setdefault(row["model"], []).append(row)
    view = load_review(session, transcript_id=rows[0]["id"])
    return {"item": view["item"] if view else None, "data_id": view["data_id"] if view else None,
            "candidate_id": candidate_id, "prompt": prompt, "models": models}
