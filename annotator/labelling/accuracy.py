"""How good each annotator is on `human_check`: the Dawid-Skene model (`figures.agreement.dawid_skene`) fitted to the
stored labels, gold items clamped to their gold class.

`fit_from_database` gives each annotator's accuracy (the expected share of their labels that are right) with a
bootstrap interval over the candidates, their confusion matrix and the number of candidates they labelled, and each
candidate's posterior probability of being truly unsolvable (human_check = 1). The LLM verifier's verdict (Step 2 of
the construction pipeline: both models said yes, or one said no) may join as one more rater, `LLM_VERIFIER`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from sqlalchemy import case, func, or_, select
from sqlmodel import Session

from annotator.database.models import Annotation, Annotator, Candidate, GoldLabel
from annotator.database.queries import of_source_and_type, people_labels_query
from annotator.database.raw_rows import read_arrays
from annotator.figures.agreement import dawid_skene

LLM_VERIFIER = "LLM verifier"
DEFAULT_RESAMPLES = 200
# The Team page's bootstrap: `DEFAULT_RESAMPLES` up to this many labels, fewer beyond (at least `FEWEST_RESAMPLES`),
# so that its figures stay a few seconds' work on a big project.
PAGE_RESAMPLED_LABELS = 3_000_000
FEWEST_RESAMPLES = 20


def page_resamples(labels: int) -> int:
    """How many bootstrap samples the Team page draws over this many labels."""
    return max(FEWEST_RESAMPLES, min(DEFAULT_RESAMPLES, PAGE_RESAMPLED_LABELS // max(labels, 1)))


@dataclass(frozen=True)
class AnnotatorAccuracy:
    """One rater's figures. `confusion[f"true_{c}"][f"said_{y}"]`: how often they say y of a candidate whose
    true human_check is c. `accuracy_low` / `accuracy_high` are None without a bootstrap."""

    annotator: str
    accuracy: float
    accuracy_low: float | None
    accuracy_high: float | None
    items: int
    confusion: dict[str, dict[str, float]]


class Posteriors(Mapping[int, float]):
    """{candidate id: P(truly unsolvable)} over the fit's arrays: a dict of Python numbers is made only when one is
    looked up (the Team page's figures never do, for a big project's millions of candidates)."""

    def __init__(self, items: Sequence[Any], values: np.ndarray) -> None:
        self._items, self._values = items, values

    @cached_property
    def _by_item(self) -> dict[int, float]:
        return dict(zip(map(int, self._items), self._values.tolist()))

    def __getitem__(self, item: int) -> float:
        return self._by_item[item]

    def __iter__(self) -> Iterator[int]:
        return iter(self._by_item)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True)
class AccuracyReport:
    """The fitted model: `annotators` in the order they first labelled; `posterior` {candidate id: P(truly
    unsolvable)}; `prior_unsolvable` the model's share of truly unsolvable candidates; `annotator_ids` {name: id}
    (the LLM verifier has none)."""

    annotators: list[AnnotatorAccuracy]
    prior_unsolvable: float
    items: int
    labels: int
    gold_items: int
    iterations: int
    resamples: int
    posterior: Mapping[int, float] = field(repr=False)
    annotator_ids: dict[str, int] = field(repr=False)
    confusion_matrices: dict[str, np.ndarray] = field(repr=False)

    def to_json(self) -> dict[str, Any]:
        """The report without its per-candidate posteriors (what `agreement --json` and the Team page show)."""
        return {"annotators": [asdict(row) for row in self.annotators], "prior_unsolvable": self.prior_unsolvable,
                "items": self.items, "labels": self.labels, "gold_items": self.gold_items,
                "iterations": self.iterations, "resamples": self.resamples}


def label_triples(
    session: Session,
    *,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    system_annotators: Collection[str] = (),
    llm_rater: bool = False,
) -> tuple[list[int], list[str], list[int], dict[str, int]]:
    """The human_check labels as parallel columns (candidate id, annotator name, human_check), system annotators
    (imports) left out unless named, with the LLM verifier's verdicts when `llm_rater`; and {name: annotator id}."""
    query = people_labels_query(Annotation.candidate_id, Annotator.name, Annotation.human_check, Annotator.id,
                                data_source=data_source, rewrite_type=rewrite_type,
                                system_annotators=system_annotators)
    rows = session.execute(query).all()
    items, names, checks = [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]
    ids = {row[1]: row[3] for row in rows}
    if llm_rater:
        for candidate_id, verdict in _llm_verdicts(session, sorted(set(items))):
            items.append(candidate_id)
            names.append(LLM_VERIFIER)
            checks.append(verdict)
    return items, names, checks, ids


def llm_verdict(outputs: dict[str, Any] | None) -> int | None:
    """The LLM verifier's human_check from a candidate's `llm_outputs`: 1 when M_I found one key condition changed
    and M_R found the question unsolvable, 0 when either said no, None when neither verdict can be read."""
    outputs = outputs or {}
    verdicts = [(outputs.get(step) or {}).get("verdict") for step in ("verification", "unsolvable")]
    if False in verdicts:
        return 0
    return 1 if verdicts == [True, True] else None


def _llm_verdicts(session: Session, candidate_ids: list[int]) -> list[tuple[int, int]]:
    found = []
    for start in range(0, len(candidate_ids), 900):
        chunk = candidate_ids[start : start + 900]
        for candidate_id, outputs in session.execute(
            select(Candidate.id, Candidate.llm_outputs).where(Candidate.id.in_(chunk))
        ):
            verdict = llm_verdict(outputs if isinstance(outputs, dict) else None)
            if verdict is not None:
                found.append((candidate_id, verdict))
    return found


def gold_classes(session: Session) -> dict[int, int]:
    """{candidate id: gold human_check} of every gold item."""
    return dict(session.execute(select(GoldLabel.candidate_id, GoldLabel.human_check)).all())  # type: ignore[arg-type]


def label_frame(session: Session, *, data_source: str | None = None, rewrite_type: str | None = None,
                system_annotators: Collection[str] = ()) -> Any:
    """`labels.label_rows` (the same labels, in the same order) as a pandas DataFrame (columns item, annotator,
    human_check, difficulty_eval, seconds) of compact columns: integers, floats (NaN for none) and the names as a
    categorical (a code per label), read as arrays (`raw_rows.read_arrays`: a binary COPY on PostgreSQL): the Team
    page's, `agreement`'s and adaptive overlap's millions of labels.
    """
    import pandas as pd

    people = dict(session.execute(select(Annotator.id, Annotator.name).where(
        or_(Annotator.is_system.is_(False), Annotator.name.in_(list(system_annotators))))).all())
    query = select(
        Annotation.id, Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check,
        func.coalesce(Annotation.difficulty_eval, -1).label("difficulty_eval"),
        case((Annotation.seconds_spent.is_(None), 0), else_=1).label("timed"),
        func.coalesce(Annotation.seconds_spent, 0.0).label("seconds"),
    ).where(Annotation.annotator_id.in_(list(people) or [-1]))
    if data_source or rewrite_type:
        query = of_source_and_type(query.join(Candidate, Candidate.id == Annotation.candidate_id),
                                   data_source=data_source, rewrite_type=rewrite_type)
    columns = read_arrays(session, query, [np.int32, np.int32, np.int32, np.int16, np.int16, np.int16, np.float64])
    order = np.lexsort((columns.pop("id"), columns["candidate_id"]))  # `label_rows`' order: by candidate, then label
    code = np.zeros(max(people, default=0) + 1, dtype=np.int32)
    code[list(people)] = np.arange(len(people))

    def ordered(name: str) -> np.ndarray:  # each column put in order, its unordered copy let go at once
        return columns.pop(name)[order]

    frame = pd.DataFrame({"item": ordered("candidate_id")})
    frame["annotator"] = pd.Categorical.from_codes(code[ordered("annotator_id")], categories=list(people.values()))
    frame["human_check"] = ordered("human_check").astype(np.int8)
    difficulty = ordered("difficulty_eval")
    frame["difficulty_eval"] = np.where(difficulty >= 0, difficulty, np.nan)
    timed = ordered("timed") == 1
    frame["seconds"] = np.where(timed, ordered("seconds"), np.nan)
    return frame


def fit_from_database(
    session: Session,
    *,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    system_annotators: Collection[str] = (),
    llm_rater: bool = False,
    resamples: int | None = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> AccuracyReport | None:
    """Fit the model to the stored human_check labels (see `label_triples` for which), or None without labels.

    `resamples` bootstrap samples of the candidates (seeded by `seed`) give each accuracy's 95% interval; 0 gives
    none (the interval is then None); None: `page_resamples` of the number of labels.
    """
    items, names, checks, ids = label_triples(session, data_source=data_source, rewrite_type=rewrite_type,
                                              system_annotators=system_annotators, llm_rater=llm_rater)
    if not items:
        return None
    labels = dawid_skene.Labels.of(items, names, checks)
    gold = gold_classes(session)
    resamples = page_resamples(len(items)) if resamples is None else resamples
    return report(dawid_skene.fit(labels, gold=gold), gold=gold, resamples=resamples, seed=seed, ids=ids)


def fit_from_frame(session: Session, frame: Any, *, resamples: int | None = DEFAULT_RESAMPLES,
                   seed: int = 0) -> AccuracyReport | None:
    """`fit_from_database`'s fit from the labels already read as a frame (`label_frame`: columns item, annotator,
    human_check in the same order; the system annotators it names are raters too), so the Team page reads its
    millions of labels once, as arrays."""
    if not len(frame):
        return None
    labels = dawid_skene.Labels.of(frame["item"].to_numpy(), frame["annotator"], frame["human_check"].to_numpy())
    ids = {str(name): int(id_) for id_, name in session.execute(select(Annotator.id, Annotator.name))
           if name in set(labels.raters)}
    gold = gold_classes(session)
    resamples = page_resamples(len(frame)) if resamples is None else resamples
    return report(dawid_skene.fit(labels, gold=gold), gold=gold, resamples=resamples, seed=seed, ids=ids)


def report(fitted: dawid_skene.Fit, *, gold: dict[int, int], resamples: int, seed: int,
           ids: dict[str, int]) -> AccuracyReport:
    """A fitted model as the report, with the bootstrap intervals of `resamples` samples (none when 0)."""
    labels = fitted.labels
    if resamples:
        low, high = dawid_skene.bootstrap_accuracy(labels, gold=gold, resamples=resamples, seed=seed,
                                                   start=fitted.posterior)
    else:
        low = high = np.full(len(labels.raters), np.nan)
    rows = []
    for r, name in enumerate(labels.raters):
        confusion = {f"true_{c}": {f"said_{y}": float(fitted.confusion[r, y, c]) for y in range(labels.classes)}
                     for c in range(labels.classes)}
        rows.append(AnnotatorAccuracy(str(name), float(fitted.accuracy[r]), _number(low[r]), _number(high[r]),
                                      int(fitted.items_labelled[r]), confusion))
    return AccuracyReport(
        annotators=rows, prior_unsolvable=float(fitted.prior[1]), items=len(labels.items), labels=len(labels.label),
        gold_items=int((dawid_skene.gold_codes_of(labels, gold) >= 0).sum()), iterations=fitted.iterations,
        resamples=resamples, posterior=Posteriors(labels.items, fitted.posterior[:, 1]),
        annotator_ids=ids, confusion_matrices={str(name): fitted.confusion[r] for r, name in enumerate(labels.raters)},
    )


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)
