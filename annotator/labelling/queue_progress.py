"""How far the annotator and the project are through the queue, under the queue's filters.

Counting is the expensive part (it grows with the queue), so a page counts once (`count`) and
then keeps the figures up to date itself (`QueueProgress.decided`, after each of its own decisions: one
primary-key read), counting again now and then to take in what others did (`QueueProgress.due`). The counts
follow the queue's meaning:

- the project's: pending candidates (`total`) and those with all their labels (`done`, `queue.complete`);
- mine: my labels on those candidates (`mine_done`), and the pending candidates that still need a label and
  that I have not labelled (`mine_left`) = still open minus those of them I labelled. The project's counts
  are ranges of ix_candidate_queue (status, label_count); mine walk my own annotations (annotation.annotator_id
  index), so no count looks at the annotations of every candidate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, Select, func, select
from sqlmodel import Session

from annotator.database.models import Annotation, Candidate, CandidateStatus
from annotator.database.queries import LabelTarget, counted_labels, enough_labels, of_source_and_type
from annotator.labelling.queue import complete, label_target

RECOUNT_DECISIONS = 25  # count again after this many decisions ...
RECOUNT_SECONDS = 30.0  # ... or this long, whichever comes first


@dataclass
class QueueProgress:
    """The figures a progress display shows; `filters` are the data source and rewrite type counted."""

    mine_done: int
    mine_left: int
    done: int
    total: int
    target: LabelTarget
    filters: tuple[str | None, str | None] = (None, None)
    counted_at: float = field(default_factory=time.monotonic)
    decisions_since: int = 0

    @property
    def labels_per_candidate(self) -> int:
        return self.target.labels

    @property
    def mine_share(self) -> float:
        mine = self.mine_done + self.mine_left
        return self.mine_done / mine if mine else 1.0

    @property
    def share(self) -> float:
        return self.done / self.total if self.total else 1.0

    def due(self, *, filters: tuple[str | None, str | None], now: float | None = None) -> bool:
        """Whether to count again: other filters, enough decisions since, or long enough ago."""
        age = (now if now is not None else time.monotonic()) - self.counted_at
        return filters != self.filters or self.decisions_since >= RECOUNT_DECISIONS or age >= RECOUNT_SECONDS

    def decided(self, session: Session, *, candidate_id: int, first_label: bool) -> None:
        """Take in this annotator's decision on `candidate_id` (call after `queue.decide`, in its transaction).

        A changed label moves nothing; a first one is one more of mine and one fewer left, and one more done
        for the project when it was the candidate's last missing label.
        """
        self.decisions_since += 1
        if not first_label:
            return
        self.mine_done += 1
        self.mine_left = max(self.mine_left - 1, 0)
        counted, settled = session.execute(
            select(counted_labels(self.target), Candidate.settled).where(Candidate.id == candidate_id)).one()
        if counted == self.target.labels or settled:  # this label completed it (or settled it)
            self.done = min(self.done + 1, self.total)


def _pending(query: Select, *, data_source: str | None, rewrite_type: str | None) -> Select:
    query = query.where(Candidate.status == CandidateStatus.pending)
    return of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)


def _mine(annotator_id: int, filters: dict[str, str | None], *where: ColumnElement[bool]) -> Select:
    """Count my annotations whose candidate matches: walked from my annotations (a correlated EXISTS, not a
    join, which SQLite would drive from the candidates, reading all of them)."""
    matching = _pending(select(Candidate.id).where(Candidate.id == Annotation.candidate_id, *where), **filters)
    return select(func.count()).select_from(Annotation).where(
        Annotation.annotator_id == annotator_id, matching.exists()
    )


def count(
    session: Session, *, annotator_id: int, data_source: str | None = None, rewrite_type: str | None = None
) -> QueueProgress:
    """Count the figures afresh: four counts, each a range of an index (one statement each: SQLite reads a
    count with FILTER clauses from the table, not from an index)."""
    target = label_target(session)
    filters = {"data_source": data_source, "rewrite_type": rewrite_type}
    candidates = _pending(select(func.count()).select_from(Candidate), **filters)
    total = session.execute(candidates).scalar_one()
    # Complete = enough labels or settled, counted apart: as one condition it reads every candidate.
    done = (session.execute(candidates.where(enough_labels(target))).scalar_one()
            + session.execute(candidates.where(Candidate.settled, ~enough_labels(target))).scalar_one())
    mine_done = session.execute(_mine(annotator_id, filters)).scalar_one()
    mine_open = session.execute(_mine(annotator_id, filters, ~complete(target))).scalar_one()
    return QueueProgress(
        mine_done=mine_done, mine_left=max(total - done - mine_open, 0), done=done, total=total,
        target=target, filters=(data_source, rewrite_type),
    )
