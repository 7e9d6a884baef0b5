"""Adaptive overlap: labels where they matter.

With the project setting on, a candidate gets another label only while the posterior probability of its labels'
majority class is below `threshold` and it has fewer than `max_labels` labels; once its labels reach the threshold
it is *settled* (`Candidate.settled`, written with its labels) and counts as complete, like one with `max_labels`
labels. One whose `max_labels` labels disagree and stay below the threshold is a dispute for a reviewer (no resolved
label), as a tie is. Off (the default), every candidate gets `labels_per_candidate` labels and none is settled.

The posterior is one item's E-step of the Dawid-Skene model (`figures.agreement.dawid_skene.posterior_of`) under
the annotators' confusion matrices stored in the `annotator_model` setting: refitted on all labels (`refit`) when
the setting changes and, as labels come, once the label events since the last fit are a tenth of those it saw (at
least `REFIT_EVERY`), never on each keypress. An annotator the stored model has not met is taken to be right
`UNKNOWN_ACCURACY` of the time. `needs_another_label` is the policy alone, which the bench simulates.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import numpy as np
from sqlalchemy import func, select, update
from sqlmodel import Session

from annotator.database.models import Annotation, AnnotationEvent, Annotator, Candidate, utcnow
from annotator.database.queries import bounded_setting, get_setting, ids_in, set_setting
from annotator.database.vocabulary import LabelSource
from annotator.figures.agreement.dawid_skene import posterior_of
from annotator.labelling import _label_writer, accuracy
from annotator.settings import limits

ADAPTIVE_OVERLAP = "adaptive_overlap"
ADAPTIVE_THRESHOLD = "adaptive_threshold"
ADAPTIVE_MAX_LABELS = "adaptive_max_labels"
ANNOTATOR_MODEL = "annotator_model"
DEFAULT_THRESHOLD = 0.95
DEFAULT_MAX_LABELS = 3
UNKNOWN_ACCURACY = 0.8
REFIT_EVERY = 200
_CHUNK = 2000


@dataclass(frozen=True)
class Overlap:
    """The project's overlap setting: `adaptive` on or off, the posterior that settles a candidate, the most
    labels a candidate gets."""

    adaptive: bool
    threshold: float
    max_labels: int


def adaptive_on(session: Session) -> bool:
    """Whether adaptive overlap is on (one read: what the queue and the label writer ask on every keypress)."""
    return get_setting(session, key=ADAPTIVE_OVERLAP, default=False) is True


def overlap(session: Session) -> Overlap:
    """The stored setting (off, `DEFAULT_THRESHOLD`, `DEFAULT_MAX_LABELS` where none is stored)."""
    return Overlap(
        adaptive=adaptive_on(session),
        threshold=float(bounded_setting(session, key=ADAPTIVE_THRESHOLD, allowed=limits.ADAPTIVE_THRESHOLD,
                                        default=DEFAULT_THRESHOLD)),
        max_labels=int(bounded_setting(session, key=ADAPTIVE_MAX_LABELS, allowed=limits.ADAPTIVE_MAX_LABELS,
                                       default=DEFAULT_MAX_LABELS)),
    )


def set_overlap(session: Session, *, adaptive: bool | None = None, threshold: float | None = None,
                max_labels: int | None = None) -> Overlap:
    """Change the setting (None keeps a value), refit the model and settle every candidate again under it.

    Raises:
        limits.RangeError: a value out of its range (nothing is changed).
    """
    limits.check_each({ADAPTIVE_THRESHOLD: (threshold, limits.ADAPTIVE_THRESHOLD),
                       ADAPTIVE_MAX_LABELS: (max_labels, limits.ADAPTIVE_MAX_LABELS)})
    for key, value in ((ADAPTIVE_OVERLAP, adaptive), (ADAPTIVE_THRESHOLD, threshold),
                       (ADAPTIVE_MAX_LABELS, max_labels)):
        if value is not None:
            set_setting(session, key=key, value=bool(value) if key == ADAPTIVE_OVERLAP else value)
    refit(session)
    return overlap(session)


def describe(setting: Overlap, labels_per_candidate: int) -> str:
    """The setting in words, for where k is shown."""
    if not setting.adaptive:
        return f"fixed: {labels_per_candidate} label(s) per candidate (adaptive overlap off)"
    return (f"adaptive: another label while the majority's posterior is below {setting.threshold:g}, "
            f"at most {setting.max_labels} label(s) per candidate")


# The policy, pure.

def majority_posterior(prior: Sequence[float], confusions: Sequence[np.ndarray], given: Sequence[int]) -> float:
    """The posterior probability of the class most of `given` say (0 with no labels or a tie), each label `given[j]`
    by a rater whose confusion matrix (said x true) is `confusions[j]`."""
    votes = np.bincount(np.asarray(given, dtype=np.int64), minlength=len(prior))
    if not len(given) or (votes == votes.max()).sum() > 1:
        return 0.0
    return float(posterior_of(prior, confusions, given)[int(votes.argmax())])


def settles(posterior: float, labels: int, *, threshold: float) -> bool:
    """Whether `labels` labels whose majority class has this posterior settle a candidate."""
    return labels >= 1 and posterior >= threshold


def needs_another_label(posterior: float, labels: int, *, threshold: float, max_labels: int) -> bool:
    """Whether a candidate with `labels` labels whose majority class has this posterior gets another one."""
    return labels < max_labels and not settles(posterior, labels, threshold=threshold)


def unsettled_dispute(posterior: float, given: Sequence[int], *, threshold: float, max_labels: int) -> bool:
    """Whether a candidate's labels `given` make it a dispute for a reviewer: the most labels, disagreeing, and
    still below the threshold (a tie of fixed overlap is one too)."""
    return len(given) >= max_labels and posterior < threshold and 0 < sum(given) < len(given)


def symmetric_confusion(right: float) -> np.ndarray:
    """The confusion matrix of a rater right `right` of the time whatever the true class."""
    return np.array([[right, 1 - right], [1 - right, right]])


# The stored model.

@dataclass(frozen=True)
class Model:
    """The classes' prior and each annotator's confusion matrix (said x true) by annotator id; `events` is the
    label history's last event id when it was fitted (how many labels came since)."""

    prior: tuple[float, float]
    confusion: dict[int, np.ndarray]
    events: int

    def of(self, annotator_id: int) -> np.ndarray:
        found = self.confusion.get(annotator_id)
        return symmetric_confusion(UNKNOWN_ACCURACY) if found is None else found

    def to_json(self) -> dict[str, Any]:
        return {"prior": list(self.prior), "events": self.events,
                "confusion": {str(key): value.tolist() for key, value in self.confusion.items()}}

    @classmethod
    def from_json(cls, value: Any) -> Model:
        """The stored model; an absent or unreadable one is the uninformed model (even prior, nobody met)."""
        try:
            prior = (float(value["prior"][0]), float(value["prior"][1]))
            confusion = {int(key): np.asarray(matrix, dtype=float).reshape(2, 2)
                         for key, matrix in value["confusion"].items()}
            return cls(prior, confusion, int(value["events"]))
        except (TypeError, KeyError, ValueError, IndexError):
            return cls((0.5, 0.5), {}, 0)


def stored_model(session: Session) -> Model:
    return Model.from_json(get_setting(session, key=ANNOTATOR_MODEL))


def _last_event(session: Session) -> int:
    return int(session.execute(select(func.max(AnnotationEvent.id))).scalar() or 0)


def refit(session: Session) -> Model:
    """Fit the model to every label (imports' too: they count toward a candidate's labels), store it, and settle
    every candidate again (none while adaptive overlap is off)."""
    # Read as arrays: every label of a big project.
    frame = accuracy.label_frame(session, system_annotators=_system_names(session))
    fitted = accuracy.fit_from_frame(session, frame, resamples=0)
    if fitted is None:
        model = Model((0.5, 0.5), {}, _last_event(session))
    else:
        model = Model((1 - fitted.prior_unsolvable, fitted.prior_unsolvable),
                      {fitted.annotator_ids[name]: matrix for name, matrix in fitted.confusion_matrices.items()
                       if name in fitted.annotator_ids}, _last_event(session))
    set_setting(session, key=ANNOTATOR_MODEL, value=model.to_json())
    settle_all(session)
    return model


def _system_names(session: Session) -> list[str]:
    return list(session.execute(select(Annotator.name).where(Annotator.is_system.is_(True))).scalars())


def after_labels(session: Session, *, candidate_ids: Collection[int]) -> None:
    """Called by the label writer once these candidates' labels are written: with adaptive overlap on, refit the
    model when enough labels came since the last fit (which settles every candidate), else settle these."""
    if not adaptive_on(session):
        return
    setting, model = overlap(session), stored_model(session)
    if _last_event(session) - model.events >= max(REFIT_EVERY, model.events // 10):
        refit(session)
        return
    _settle(session, candidate_ids, model=model, setting=setting)


def settle_all(session: Session) -> None:
    """Every candidate's `settled` flag and resolved label under the stored setting and model: with adaptive
    overlap off none is settled and every candidate's majority is back."""
    setting = overlap(session)
    if not setting.adaptive:
        session.execute(update(Candidate).where(Candidate.settled.is_(True)).values(settled=False))
        # The disputes adaptive overlap made (at the most labels, unsettled) resolve by their majority again.
        open_ties = select(Candidate.id).where(Candidate.label_count > 0, Candidate.human_check.is_(None))
        _restore(session, list(session.execute(open_ties).scalars()))
        return
    labelled = select(Candidate.id).where(Candidate.label_count > 0).order_by(Candidate.id)
    ids = list(session.execute(labelled).scalars())
    session.execute(update(Candidate).where(Candidate.label_count == 0, Candidate.settled.is_(True))
                    .values(settled=False))
    _restore(session, ids)
    _settle(session, ids, model=stored_model(session), setting=setting)


def _restore(session: Session, candidate_ids: list[int]) -> None:
    """These candidates' resolved labels from their labels (and decisions) as the label writer stores them."""
    connection = session.connection()
    for start in range(0, len(candidate_ids), _CHUNK):
        connection.execute(_label_writer._resolved_labels(candidate_ids[start : start + _CHUNK], now=utcnow(),
                                                         unlabelled=False, dialect=connection.dialect.name))


def _settle(session: Session, candidate_ids: Collection[int], *, model: Model, setting: Overlap) -> None:
    """Store which of these candidates their labels settle, and make those the most labels leave unsettled and
    disagreeing disputes (no resolved label), a reviewer's decision apart."""
    dialect = session.connection().dialect.name
    ordered = sorted(set(candidate_ids))
    for start in range(0, len(ordered), _CHUNK):
        chunk = ordered[start : start + _CHUNK]
        rows = session.execute(
            select(Annotation.candidate_id, Annotation.annotator_id, Annotation.human_check)
            .where(ids_in(Annotation.candidate_id, chunk, dialect=dialect))
            .order_by(Annotation.candidate_id)
        ).all()
        settled, disputed = _judged(rows, model=model, setting=setting)
        for value, ids in ((True, sorted(settled)), (False, [i for i in chunk if i not in settled])):
            if ids:
                session.execute(update(Candidate).where(ids_in(Candidate.id, ids, dialect=dialect))
                                .values(settled=value), execution_options={"synchronize_session": False})
        if disputed:
            session.execute(
                update(Candidate)
                .where(ids_in(Candidate.id, disputed, dialect=dialect),
                       func.coalesce(Candidate.label_source, "") != LabelSource.adjudicated.value)
                .values(human_check=None, difficulty_eval=None, label_source=None),
                execution_options={"synchronize_session": False})


def _judged(rows: Iterable[Any], *, model: Model, setting: Overlap) -> tuple[set[int], list[int]]:
    """Of these (candidate id, annotator id, human_check) rows, in candidate order: the candidates their labels
    settle, and those they leave a dispute."""
    settled, disputed = set(), []
    for candidate_id, labels in groupby(rows, key=lambda row: row[0]):
        given = [(row[1], row[2]) for row in labels]
        checks = [check for _, check in given]
        posterior = majority_posterior(model.prior, [model.of(who) for who, _ in given], checks)
        if settles(posterior, len(given), threshold=setting.threshold):
            settled.add(candidate_id)
        elif unsettled_dispute(posterior, checks, threshold=setting.threshold, max_labels=setting.max_labels):
            disputed.append(candidate_id)
    return settled, disputed
