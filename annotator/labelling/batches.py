"""Excel batches: candidates handed to named annotators as sheets to fill in offline (`python -m annotator
batches`); the filled sheets come back through `import` (`annotator.import_export.formats.batch`).

A batch hands candidates out through claims, as the browser queue does (`annotator.labelling.queue`): a candidate
goes to no more annotators than `labels_per_candidate` minus its labels minus its unexpired claims, never to
someone who labelled or holds it, and the browser queue skips what the sheets hold. A batch claim lasts
`days` (default `DEFAULT_DAYS`), the deadline written into the sheet; importing a row's label gives its
claim up. Candidates are taken in the queue's order (fewest labels first, then import order), each given to
`overlap` annotators (default: `labels_per_candidate`), those with the fewest candidates so far first, so
every pair of annotators shares some; `per_annotator` caps each sheet.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, insert, select
from sqlmodel import Session

from annotator.database.engine import write_session
from annotator.database.models import Annotation, Annotator, Candidate, CandidateClaim, CandidateStatus, utcnow
from annotator.database.queries import (
    LabelTarget,
    candidates_query,
    counted_labels,
    iter_query,
    of_source_and_type,
    original_question_and_answer,
)
from annotator.labelling import adaptive
from annotator.labelling.gold import is_gold
from annotator.labelling.queue import complete, label_target

DEFAULT_DAYS = 14
_IN_CHUNK = 900
_CHUNK = 500  # candidates read (and, on PostgreSQL, locked) at a time


class BatchError(ValueError):
    """Batches that cannot be made as asked (an unknown annotator, an overlap beyond the project's setting...)."""


@dataclass
class Batches:
    """What `make_batches` handed out: the batch's name, its deadline and each annotator's candidate ids."""

    name: str
    deadline: datetime
    assigned: dict[str, list[int]] = field(default_factory=dict)


def _check(annotators: Sequence[str], per_annotator: int | None, overlap: int | None, days: float) -> None:
    if not annotators:
        raise BatchError("name at least one annotator")
    if len(set(annotators)) != len(annotators):
        raise BatchError(f"an annotator is named twice: {', '.join(annotators)}")
    if per_annotator is None and overlap is None:
        raise BatchError("give --per-annotator N or --overlap K")
    if per_annotator is not None and per_annotator < 1:
        raise BatchError(f"--per-annotator must be at least 1, got {per_annotator}")
    if overlap is not None and not 1 <= overlap <= len(annotators):
        raise BatchError(f"--overlap must be between 1 and the number of annotators ({len(annotators)}), got {overlap}")
    if days <= 0:
        raise BatchError(f"--days must be more than 0, got {days}")


def _annotator_ids(session: Session, names: Sequence[str]) -> dict[str, int]:
    rows = session.execute(
        select(Annotator.name, Annotator.id, Annotator.is_system, Annotator.is_active).where(Annotator.name.in_(names))
    ).all()
    found = {row.name: row for row in rows}
    for name in names:
        row = found.get(name)
        if row is None or row.is_system:
            raise BatchError(f"{name!r} has no account; add it with `python -m annotator user add {name}`")
        if not row.is_active:
            raise BatchError(f"{name!r} is disabled; enable the account first")
    return {name: found[name].id for name in names}


def _open_candidates(
    session: Session, *, target: LabelTarget, data_source: str | None, rewrite_type: str | None
) -> Iterator[list[Any]]:
    """(id, labels that count toward `target`) of the candidates that still need labels, in the queue's order, in
    chunks.

    On PostgreSQL each chunk's rows are locked as they are fetched (a cursor FOR UPDATE), so that no label
    or browser claim lands on them while the batch is made, and only the rows read are held: a batch of a
    few sheets does not hide the rest of the queue from the browsers (they skip locked rows).
    """
    query = select(Candidate.id, counted_labels(target)).where(
        Candidate.status == CandidateStatus.pending, ~complete(target), ~is_gold()  # gold items stay in the browser
    )
    query = of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)
    query = query.order_by(Candidate.label_count, Candidate.id)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(of=Candidate)
    result = session.execute(query.execution_options(yield_per=_CHUNK))
    try:
        yield from result.partitions()
    finally:
        result.close()


def _holders(session: Session, *, candidate_ids: list[int], now: datetime) -> dict[int, set[int]]:
    """Who holds each of these candidates (unexpired claims, browser or batch); read after their rows are
    locked, so the answer stays true until the batch commits."""
    holders: dict[int, set[int]] = {}
    rows = session.execute(
        select(CandidateClaim.candidate_id, CandidateClaim.annotator_id).where(
            CandidateClaim.candidate_id.in_(candidate_ids), CandidateClaim.expires_at > now
        )
    )
    for candidate_id, annotator_id in rows:
        holders.setdefault(candidate_id, set()).add(annotator_id)
    return holders


def _labelled(session: Session, *, candidate_ids: list[int], annotator_ids: Collection[int]) -> set[tuple[int, int]]:
    rows = session.execute(
        select(Annotation.candidate_id, Annotation.annotator_id).where(
            Annotation.candidate_id.in_(candidate_ids), Annotation.annotator_id.in_(list(annotator_ids))
        )
    )
    return {(row[0], row[1]) for row in rows}


@dataclass
class _Assignment:
    """Candidates handed out so far: each to up to `overlap` annotators who may have it, those with the
    fewest candidates so far first (ties in the order the annotators were named)."""

    people: dict[str, int]
    target: int
    overlap: int
    per_annotator: int | None
    one_at_a_time: bool = False  # adaptive overlap: a candidate held by anyone waits for that label
    assigned: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.assigned = {name: [] for name in self.people}
        self.order = {name: index for index, name in enumerate(self.people)}

    def full(self) -> bool:
        cap = self.per_annotator
        return cap is not None and all(len(ids) >= cap for ids in self.assigned.values())

    def add(self, chunk: list[Any], *, holders: dict[int, set[int]], labelled: set[tuple[int, int]]) -> None:
        cap = self.per_annotator
        for candidate_id, counted in chunk:
            held = holders.get(candidate_id, set())
            room = 0 if held and self.one_at_a_time else min(self.overlap, self.target - counted - len(held))
            eligible = [
                name
                for name, annotator_id in self.people.items()
                if annotator_id not in held
                and (candidate_id, annotator_id) not in labelled
                and (cap is None or len(self.assigned[name]) < cap)
            ]
            eligible.sort(key=lambda name: (len(self.assigned[name]), self.order[name]))
            for name in eligible[: max(room, 0)]:
                self.assigned[name].append(candidate_id)
            if self.full():
                return


def make_batches(
    session: Session,
    *,
    annotators: Sequence[str],
    per_annotator: int | None = None,
    overlap: int | None = None,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    days: float = DEFAULT_DAYS,
    now: datetime | None = None,
) -> Batches:
    """Hand candidates to `annotators` and claim them until the deadline (now + `days`).

    Call inside `write_session()` (on SQLite, BEGIN IMMEDIATE makes "find and claim" atomic against the
    browser queue). Raises `BatchError` for bad arguments, unknown or disabled annotators, or an `overlap`
    beyond `labels_per_candidate`.
    """
    _check(annotators, per_annotator, overlap, days)
    target, adaptive_on = label_target(session), adaptive.overlap(session).adaptive
    if adaptive_on and overlap not in (None, 1):
        raise BatchError(f"--overlap {overlap}: with adaptive overlap on each candidate gets one label at a time; "
                         "leave --overlap out, or turn adaptive overlap off first")
    if overlap is not None and overlap > target.labels:
        raise BatchError(
            f"--overlap {overlap} is more than labels_per_candidate ({target.labels}); raise it first with "
            f"`python -m annotator settings --labels-per-candidate {overlap}`"
        )
    people = _annotator_ids(session, annotators)
    now = now or utcnow()
    plan = _Assignment(people, target.labels, 1 if adaptive_on else overlap or min(target.labels, len(people)),
                       per_annotator, one_at_a_time=adaptive_on)
    for chunk in _open_candidates(session, target=target, data_source=data_source, rewrite_type=rewrite_type):
        ids = [row[0] for row in chunk]
        plan.add(
            chunk,
            holders=_holders(session, candidate_ids=ids, now=now),
            labelled=_labelled(session, candidate_ids=ids, annotator_ids=people.values()),
        )
        if plan.full():
            break
    assigned = plan.assigned
    batches = Batches(name=f"batch-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}", deadline=now + timedelta(days=days))
    batches.assigned = assigned
    # Expired claims are void; one left on a candidate handed out now would clash with the new claim's key.
    session.execute(
        delete(CandidateClaim).where(CandidateClaim.annotator_id.in_(people.values()), CandidateClaim.expires_at <= now)
    )
    claims = [
        {"candidate_id": candidate_id, "annotator_id": people[name], "expires_at": batches.deadline,
         "batch": batches.name}
        for name, ids in assigned.items()
        for candidate_id in ids
    ]
    if claims:
        session.connection().execute(insert(CandidateClaim.__table__), claims)
    return batches


def sheet_rows(session: Session, *, candidate_ids: Sequence[int]) -> list[dict[str, Any]]:
    """The candidates' fields a sheet shows (see `annotator.labelling.batch_sheets.write_batch`), in the order given."""
    rows: dict[int, dict[str, Any]] = {}
    for start in range(0, len(candidate_ids), _IN_CHUNK):
        query = candidates_query(order="id").where(Candidate.id.in_(candidate_ids[start : start + _IN_CHUNK]))
        for row in iter_query(session, query):
            row["question"], row["ground_truth"] = original_question_and_answer(row)
            rows[row["id"]] = row
    return [rows[candidate_id] for candidate_id in candidate_ids]


def file_name(annotator: str) -> str:
    """`{annotator}.xlsx`, with characters a file name cannot safely hold replaced by `_`."""
    return re.sub(r"[^\w.@+ -]", "_", annotator).strip(" .") + ".xlsx"


def release_batch(session: Session, *, name: str) -> None:
    """Give up every claim of a batch (its sheets could not be written)."""
    session.execute(delete(CandidateClaim).where(CandidateClaim.batch == name))


def create_batches(engine: Engine, *, out: Path, **options: Any) -> Batches:
    """`make_batches(**options)` and write `out/{annotator}.xlsx` for each annotator with candidates.

    The claims are committed before the sheets are written (a write lock is not held while Excel files are
    built); if writing fails they are given up again.
    """
    from annotator.labelling.batch_sheets import write_batch  # openpyxl: only this command needs it

    annotators = set(options.get("annotators", ()))
    names = {file_name(name) for name in annotators}
    if len(names) != len(annotators):
        raise BatchError(f"two annotators' sheets would have the same file name: {', '.join(sorted(names))}")
    with write_session(engine) as session:
        batches = make_batches(session, **options)
        rows = {name: sheet_rows(session, candidate_ids=ids) for name, ids in batches.assigned.items() if ids}
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, candidates in rows.items():
            write_batch(out / file_name(name), annotator=name, candidates=candidates, batch=batches.name,
                        deadline=batches.deadline)
    except BaseException:
        with write_session(engine) as session:
            release_batch(session, name=batches.name)
        raise
    return batches
