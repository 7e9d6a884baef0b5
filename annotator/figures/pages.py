"""The slow pages' figures as data: what the Overview, Team and Report pages show, how each is computed from the
database, the fingerprint of the data it comes from (`annotator.figures.fingerprints`), and each as JSON, so that the
latest figures are stored for every app server (`annotator.figures.snapshots`).

The figures are plain JSON values today: dicts with text keys, lists, text, numbers and None (tests/
test_figures.py checks that `from_json(to_json(figures))` gives back figures equal to the computed ones, so a
tuple, a date or a non-text key added to them shows up there). NaN is kept (Python's JSON reads it back).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from annotator.figures import fingerprints


@dataclass(frozen=True)
class Figures:
    """One page's figures: `key` names their stored row, `compute` makes them, `version` fingerprints their data."""

    key: str
    compute: Callable[[Session], Any]
    version: Callable[[Session], tuple[Any, ...]]

    def to_json(self, value: Any) -> str:
        """The figures as compact JSON text.

        Raises:
            TypeError: a value JSON cannot hold (named with its type and these figures' key).
        """
        def plain(value: object) -> object:
            if hasattr(value, "item") and callable(value.item):  # a NumPy number: its Python number
                return value.item()
            raise TypeError(f"the {self.key} figures hold a {type(value).__name__}, which JSON cannot store")

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)

    def from_json(self, text: str) -> Any:
        """The figures `to_json` wrote."""
        return json.loads(text)


def team(session: Session) -> dict[str, Any]:
    """The Team page's counts: each person's activity (labels, time, labels per day), summed from what the database
    keeps per annotator and day (`label_days`), and gold accuracy, counted by the database from the gold items' labels
    (they follow every label, so they are recomputed often)."""
    from annotator.labelling import gold, labels

    return {"activity": labels.activity(session), "gold": gold.gold_accuracy(session)}


def team_agreement(session: Session) -> dict[str, Any]:
    """The Team page's coefficients over the whole label matrix: agreement (`label_agreement`, with each annotator's
    gold accuracy) and each annotator's accuracy on human_check (Dawid-Skene with a bootstrap,
    `accuracy.fit_from_frame`), from one bulk read of the labels as arrays (the Team page has them computed in a child
    process on a big project)."""
    # Imported here: each page loads only its own figures' modules (the Report's load the judge).
    from annotator.figures.agreement import label_agreement
    from annotator.labelling import accuracy, gold

    rows = accuracy.label_frame(session)  # millions of labels: read in bulk, as a frame
    on_gold = gold.gold_accuracy(session)
    report = label_agreement(rows, gold={name: person["gold_accuracy"] for name, person in on_gold.items()})
    fitted = accuracy.fit_from_frame(session, rows, resamples=None)
    return {"agreement": report, "accuracy": None if fitted is None else fitted.to_json()}


def report(session: Session) -> dict[str, Any]:
    """The Report page's figures: the rows by data source, rewrite type and difficulty_eval (one read, one
    bootstrap), the items the models disagree on most, the verdicts that differ from the reference rule and the
    tags per model."""
    from annotator.transcripts import tag_counts
    from annotator.transcripts.report import counting, disagreed, scores

    groups = counting.read(session)  # down to the item, or by slice for a big report (`counting`)
    # One bootstrap for the three breakdowns: their pooled rows and A sets are resampled once.
    by_source, by_type, by_difficulty = scores.reports(
        session, breakdowns=[["data_source"], ["rewrite_type"], ["difficulty_eval"]], groups=groups)
    return {
        "by_source": by_source, "rewrite_type": by_type, "difficulty_eval": by_difficulty,
        "disagreed": disagreed.disagreed_items(session, groups=groups),
        "differs_from_reference": scores.differs_from_reference(session),
        "tags": tag_counts(session),
    }


def overview(session: Session) -> dict[str, Any]:
    """The Overview's figures: the statistics (`stats.compute`) and the progress charts' rows (`stats.progress`:
    candidates per state, labels per day), counted from one reading of the candidates."""
    from annotator.figures import stats

    counted = stats.groups(session)
    return {"stats": stats.compute(session, counted=counted), "progress": stats.progress(session, counted=counted)}


def judges(session: Session) -> list[dict[str, Any]]:
    """The Report page's last section: every judge against the reviewers (`judges.judge_agreement`)."""
    from annotator.transcripts.report.judges import judge_agreement

    return judge_agreement(session)


TEAM = Figures("team", team, fingerprints.labels_version)
TEAM_AGREEMENT = Figures("team_agreement", team_agreement, fingerprints.labels_version)
OVERVIEW = Figures("overview", overview, fingerprints.overview_version)
REPORT = Figures("report", report, fingerprints.transcripts_version)
JUDGES = Figures("report_judges", judges, fingerprints.transcripts_version)
