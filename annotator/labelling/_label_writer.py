"""The set-based work behind `labels.record_labels`, its only caller: what is stored for a chunk of rows (read
once, locked), the plan of writes and events built from it, and the candidates' resolved labels as one SQL
statement (`_resolved_labels`: the majority and tie rules, and where the label comes from; a candidate whose one
label is new takes it, `_ALONE_RESOLVED`). Plain new labels (an import's) go from one JSON text (`_ROWS`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    Float,
    Text,
    TextClause,
    Update,
    bindparam,
    case,
    cast,
    func,
    insert,
    select,
    text,
    update,
)
from sqlmodel import Session

from annotator.database.models import Adjudication, Annotation, AnnotationEvent, Annotator, Candidate, utcnow
from annotator.database.queries import execute_rows, ids_in
from annotator.database.raw_rows import iter_raw_tuples
from annotator.database.vocabulary import LabelSource

# Candidates per statement. Their ids go as one bound value (`queries.ids_in`), so no limit on bound parameters applies.
_CHUNK = 2000
_ANNOTATION, _ADJUDICATION, _CANDIDATE = Annotation.__table__, Adjudication.__table__, Candidate.__table__  # type: ignore[attr-defined]
# Whose labels came with an import or a pipeline (a handful of rows: the annotator table is small).
_SYSTEM_ANNOTATORS = select(Annotator.__table__.c.id).where(Annotator.__table__.c.is_system.is_(True))  # type: ignore[attr-defined]


class Stored(NamedTuple):
    """A label (or a decision, whose `id` is its candidate's) as stored."""

    id: int
    annotator_id: int
    human_check: int
    difficulty_eval: int | None
    comment: str | None
    seconds_spent: float | None = None

    def label(self) -> tuple[int, int | None, str | None]:
        """Its human_check, difficulty_eval and comment: what an event records of it (`_LABEL`)."""
        return self.human_check, self.difficulty_eval, self.comment


class StoredRows(NamedTuple):
    labels: dict[tuple[int, int], Stored]  # by (candidate, annotator)
    decisions: dict[int, Stored]  # by candidate
    labelled: set[int]  # the rows' candidates that hold a label of anyone's


def _chunks(ids: Collection[int]) -> list[list[int]]:
    ordered = sorted(set(ids))
    return [ordered[start : start + _CHUNK] for start in range(0, len(ordered), _CHUNK)]


def stored(session: Session, *, rows: Sequence[Any], unlabelled: Collection[int] = ()) -> StoredRows:
    """The rows' annotators' labels on the rows' candidates, and the decisions on those the rows decide, their
    candidates locked; the `unlabelled` candidates' labels not looked for (`labels.record_labels`)."""
    labels: dict[tuple[int, int], Stored] = {}
    decisions: dict[int, Stored] = {}
    labelled: set[int] = set()
    # PostgreSQL (READ COMMITTED): lock the candidates first, in id order, or two annotators labelling one
    # candidate at once would each count the other's label as missing and store a short label_count. SQLite's
    # write_session already holds the database's write lock (BEGIN IMMEDIATE): nothing to lock there.
    dialect = session.connection().dialect.name
    a, j, c = _ANNOTATION.c, _ADJUDICATION.c, _CANDIDATE.c
    for chunk in _chunks([row.candidate_id for row in rows]) if dialect != "sqlite" else ():
        session.execute(select(c.id).where(ids_in(c.id, chunk, dialect=dialect)).order_by(c.id).with_for_update())
    annotators = {row.annotator_id for row in rows if not row.decision}
    # By candidate only, the rows' annotators kept here (a candidate has a few labels): in an import's transaction
    # PostgreSQL has no statistics of the labels it is adding, and given the annotator too it would read them
    # through the annotator's index, every label of that annotator so far for each chunk (quadratic in the import).
    known = set(unlabelled)
    for chunk in _chunks([row.candidate_id for row in rows if not row.decision and row.candidate_id not in known]):
        query = select(a.candidate_id, a.id, a.annotator_id, a.human_check, a.difficulty_eval, a.comment,
                       a.seconds_spent).where(ids_in(a.candidate_id, chunk, dialect=dialect))
        for row in iter_raw_tuples(session, query):
            labelled.add(row[0])
            if row[2] in annotators:
                labels[row[0], row[2]] = Stored(*row[1:])
    for chunk in _chunks([row.candidate_id for row in rows if row.decision]):
        query = select(j.candidate_id, j.annotator_id, j.human_check, j.difficulty_eval, j.comment).where(
            ids_in(j.candidate_id, chunk, dialect=dialect))
        decisions.update({row[0]: Stored(*row) for row in iter_raw_tuples(session, query)})
    return StoredRows(labels, decisions, labelled)


def alone(session: Session, *, rows: Sequence[Any], labelled: Collection[int],
          unlabelled: Collection[int] = ()) -> set[int]:
    """The rows' candidates whose label will be a row's alone: no label stored, none decided, one row each. The
    `unlabelled` are known to have no decision (`labels.record_labels`)."""
    counts = Counter(row.candidate_id for row in rows)
    ids = {candidate for candidate, count in counts.items() if count == 1 and candidate not in labelled}
    dialect, j = session.connection().dialect.name, _ADJUDICATION.c
    unknown = ids - set(unlabelled)  # whose decisions to look for
    for chunk in _chunks(unknown) if unknown else ():
        ids.difference_update(session.execute(select(j.candidate_id).where(ids_in(j.candidate_id, chunk,
                                                                                   dialect=dialect))).scalars())
    return ids


class Plan:
    """The writes and events a list of rows comes to, given what is stored (`add` each row, then `write`)."""

    def __init__(self, *, replace: bool, keep_comments: bool) -> None:
        self.replace, self.keep_comments = replace, keep_comments
        self.now = utcnow()
        self.added = self.updated = 0
        self.events: list[tuple[Any, ...]] = []  # in `_EVENT_KEYS`' order
        self._texts: dict[tuple[Any, ...], str] = {}
        # (table, statement kind) -> rows, each in its `_STATEMENTS` keys' order: labels and decisions, inserted or
        # updated; time spent alone
        self.writes: dict[str, list[tuple[Any, ...]]] = {name: [] for name in _STATEMENTS}
        # New labels with no comment, time spent, decision id or key time (an import's): on SQLite written from one
        # JSON text, not a row at a time. And the new labels that are their candidate's only label or decision.
        self.plain: list[Any] = []
        self.alone: list[Any] = []

    def add(self, row: Any, old: Stored | None) -> tuple[Stored, str] | None:
        """Plan one row against what is stored; (the stored one, the field) when it may not replace it."""
        if old is None:  # most rows of an import: a new label, planned without comparing
            self._insert(row, (row.human_check, row.difficulty_eval, row.comment))
            return None
        comment = old.comment if row.comment is None and self.keep_comments else row.comment
        new = (row.human_check, row.difficulty_eval, comment)
        if row.decision and old.annotator_id != row.annotator_id and not self.replace:
            return old, "human_check"  # another reviewer's decision
        if old.label() == new:
            if row.seconds_spent is not None and not row.decision:
                self.writes["label seconds"].append((old.id, _plus(old, row)))
            return None
        if not self.replace and not row.decision:
            same_label = (old.human_check, old.difficulty_eval) == (row.human_check, row.difficulty_eval)
            return old, "comment" if same_label else "human_check"
        self._update(row, old, new)
        return None

    def add_new(self, rows: Sequence[Any], *, alone: Collection[int] = ()) -> None:
        """Plan these annotators' labels, none of them stored before and none a decision: each an insert and a
        "create" event, as `add` plans one, made for all the rows at once. `alone`: the candidates among them
        whose label will be the row's alone (`alone`)."""
        if alone:
            self.alone += [row for row in rows if row.candidate_id in alone]
        self.added += len(rows)
        if all(row[4:] == _PLAIN for row in rows):
            self.plain += rows
        else:
            self._add_new(rows)

    def _add_new(self, rows: Sequence[Any]) -> None:
        now, texts, text = self.now, self._texts, self._json
        self.writes["label insert"] += [(row.candidate_id, row.annotator_id, row.human_check, row.difficulty_eval,
                                         row.comment, row.seconds_spent, now, now) for row in rows]
        self.events += [(row.candidate_id, row.annotator_id, "create", None,
                         texts.get(label) or text(label), row.pressed_at or now, row.decision_id)
                        for row in rows for label in ((row.human_check, row.difficulty_eval, row.comment),)]

    def _insert(self, row: Any, label: tuple[int, int | None, str | None]) -> None:
        now = self.now
        if row.decision:
            self.writes["decision insert"].append((row.candidate_id, row.annotator_id, *label, now, now))
        else:
            self.writes["label insert"].append((row.candidate_id, row.annotator_id, *label, row.seconds_spent, now,
                                                now))
        self.events.append((row.candidate_id, row.annotator_id, "adjudicate" if row.decision else "create", None,
                            self._json(label), row.pressed_at or now, row.decision_id))
        self.added += 1

    def _update(self, row: Any, old: Stored, label: tuple[int, int | None, str | None]) -> None:
        if row.decision:
            self.writes["decision update"].append((old.id, row.annotator_id, *label, self.now))
        else:
            self.writes["label update"].append((old.id, *label, _plus(old, row), self.now))
        self.events.append((row.candidate_id, row.annotator_id, "adjudicate" if row.decision else "update",
                            self._json(old.label()), self._json(label), row.pressed_at or self.now, row.decision_id))
        self.updated += 1

    def _json(self, label: tuple[int, int | None, str | None]) -> str:
        """The label's JSON as `JSONText` writes it, encoded once per distinct label (an import has a handful)."""
        text = self._texts.get(label)
        if text is None:
            text = self._texts[label] = _ENCODE(dict(zip(_LABEL, label, strict=True)))
        return text

    def write(self, session: Session) -> None:
        """The planned writes, their events, then the changed candidates' resolved labels."""
        connection = session.connection()
        dialect = connection.dialect.name
        changed = self.candidate_ids()
        # The rows as one JSON text for the statements that read them (`_ROWS`); on SQLite the plain ones, once
        # inserted, from their labels (`_INSERTED`).
        rows = {"rows": _json_rows(self.plain)}
        if self.plain and dialect == "sqlite":
            after = connection.execute(select(func.max(_ANNOTATION.c.id))).scalar() or 0
            session.execute(_plain(_PLAIN_LABELS, _ROWS[dialect]), {**rows, "now": self.now})
            if after < _LARGEST_ID - len(self.plain):  # each new label's id one more than the largest before
                rows = {"after": after}
            texts = {f"label{code}": self._json(label) for code, label in _LABEL_OF_CODE.items()}
            session.execute(_plain(_PLAIN_EVENTS, _INSERTED if "after" in rows else _ROWS[dialect]),
                            {**rows, "now": self.now, **texts})
        elif self.plain:  # PostgreSQL: by COPY with the others
            self._add_new(self.plain)
        for name, (statement, keys) in _STATEMENTS.items():
            # New labels by COPY on PostgreSQL (an import's many): updates and decisions are few.
            execute_rows(session, statement, keys, self.writes[name],
                         copy_into="annotation" if name == "label insert" else None)
        execute_rows(session, _EVENT_INSERT, _EVENT_KEYS, self.events, copy_into="annotationevent",
                     copy_columns={"old_text": "old", "new_text": "new"})
        if self.alone:  # each the one label of its candidate: that label
            if self.alone != self.plain:  # an import's are the same rows
                rows = {"rows": _json_rows(self.alone)}
            session.execute(_plain(_ALONE_RESOLVED, _INSERTED if "after" in rows else _ROWS[dialect]),
                            {**rows, "now": self.now, "system": True, "single": LabelSource.single.value})
            changed -= {row.candidate_id for row in self.alone}
        unlabelled = bool(self.writes["decision insert"] or self.writes["decision update"])
        for chunk in _chunks(changed):
            connection.execute(_resolved_labels(chunk, now=self.now, unlabelled=unlabelled, dialect=dialect))

    def candidate_ids(self) -> set[int]:
        """The candidates whose labels or decisions changed (an event each)."""
        return {event[0] for event in self.events} | {row.candidate_id for row in self.plain}


def _plus(old: Stored, row: Any) -> float | None:
    """The time spent on a label, with this row's added."""
    return old.seconds_spent if row.seconds_spent is None else (old.seconds_spent or 0) + row.seconds_spent


# The events' old and new label as JSON text made here (`Plan._json`), not by the columns' type per row.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
_EVENT_INSERT = insert(AnnotationEvent.__table__).values(old=bindparam("old_text", type_=Text()),
                                                         new=bindparam("new_text", type_=Text()))
_EVENT_KEYS = ("candidate_id", "annotator_id", "action", "old_text", "new_text", "at", "decision_id")
_LABEL = ("human_check", "difficulty_eval", "comment")
# A new label's fields after its human_check and difficulty_eval when it is plain (`Plan.plain`).
_PLAIN = (None, None, False, None, None)
# The labels by their code (human_check * 3 + difficulty_eval, 2 for none), as a plain label's event writes them.
_LABEL_OF_CODE = {2: (0, None, None), 3: (1, 0, None), 4: (1, 1, None)}
# Rows bound as one JSON text of [candidate_id, annotator_id, human_check, difficulty_eval] arrays.
_ROWS = {
    "sqlite": "SELECT json_extract(value, '$[0]') AS candidate_id, json_extract(value, '$[1]') AS annotator_id, "
              "json_extract(value, '$[2]') AS human_check, json_extract(value, '$[3]') AS difficulty_eval "
              "FROM json_each(:rows)",
    "postgresql": "SELECT CAST(value->>0 AS INTEGER) AS candidate_id, CAST(value->>1 AS INTEGER) AS annotator_id, "
                  "CAST(value->>2 AS INTEGER) AS human_check, CAST(value->>3 AS INTEGER) AS difficulty_eval "
                  "FROM json_array_elements(CAST(:rows AS json)) AS value",
}
# On SQLite, the labels inserted since the one whose id is `after`: its new rows' ids are the largest so far plus one,
# as long as that stays below `_LARGEST_ID` (then it picks unused ones at random).
_INSERTED = "SELECT candidate_id, annotator_id, human_check, difficulty_eval FROM annotation WHERE id > :after"
_LARGEST_ID = 2**63 - 1
_PLAIN_LABELS = ("INSERT INTO annotation (candidate_id, annotator_id, human_check, difficulty_eval, comment, "
                 "seconds_spent, created_at, updated_at) SELECT candidate_id, annotator_id, human_check, "
                 "difficulty_eval, NULL, NULL, :now, :now FROM ({rows}) AS v")
_PLAIN_EVENTS = ("INSERT INTO annotationevent (candidate_id, annotator_id, action, old, new, at, decision_id) "
                 "SELECT candidate_id, annotator_id, 'create', NULL, CASE human_check * 3 + coalesce(difficulty_eval, "
                 "2) WHEN 2 THEN :label2 WHEN 3 THEN :label3 ELSE :label4 END, :now, NULL FROM ({rows}) AS v")
# A candidate's one label is its resolved label (`_resolved_labels` comes to the same for one label).
_ALONE_RESOLVED = ("UPDATE candidate SET label_count = 1, imported_label_count = CASE WHEN v.annotator_id IN "
                   "(SELECT id FROM annotator WHERE is_system = :system) THEN 1 ELSE 0 END, human_check = "
                   "v.human_check, difficulty_eval = v.difficulty_eval, label_source = :single, agreement = 1.0, "
                   "updated_at = :now FROM ({rows}) AS v WHERE candidate.id = v.candidate_id")


def _json_rows(rows: list[Any]) -> str:
    """The rows as `_ROWS` reads them."""
    return json.dumps([row[:4] for row in rows], separators=(",", ":")) if rows else "[]"


def _plain(sql: str, rows: str) -> TextClause:
    """`sql` (`_PLAIN_LABELS` and the like) reading its rows from `rows` (`_ROWS` or `_INSERTED`)."""
    return text(sql.format(rows=rows)).bindparams(bindparam("now", type_=_CANDIDATE.c.updated_at.type))


# Each kind of write: its statement and the keys of its rows' values, in order.
_STATEMENTS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "label insert": (insert(_ANNOTATION),
                     ("candidate_id", "annotator_id", *_LABEL, "seconds_spent", "created_at", "updated_at")),
    "label update": (update(_ANNOTATION).where(_ANNOTATION.c.id == bindparam("b_id")),
                     ("b_id", *_LABEL, "seconds_spent", "updated_at")),
    "label seconds": (update(_ANNOTATION).where(_ANNOTATION.c.id == bindparam("b_id")), ("b_id", "seconds_spent")),
    "decision insert": (insert(_ADJUDICATION), ("candidate_id", "annotator_id", *_LABEL, "created_at", "updated_at")),
    "decision update": (update(_ADJUDICATION).where(_ADJUDICATION.c.candidate_id == bindparam("b_id")),
                        ("b_id", "annotator_id", *_LABEL, "updated_at")),
}


def _resolved_labels(candidate_ids: Collection[int], *, now: datetime, unlabelled: bool, dialect: str) -> Update:
    """Store these candidates' label count (and how many of them are system annotators'), resolved label and its
    source (`LabelSource`), in one statement.

    A reviewer's decision wins. Else a majority vote on human_check, a tie unresolved (None: adjudicate it);
    among the labels that accept the candidate a majority vote on difficulty_eval, a tie counting as hard (1),
    since at least half of those annotators found it hard to see that the problem is unsolvable. Counted from
    the labels (cheaper), or with `unlabelled` from the candidates, for a decision on one without labels.
    """
    a, j, c = _ANNOTATION.c, _ADJUDICATION.c, _CANDIDATE.c
    key = c.id if unlabelled else a.candidate_id
    labels = _CANDIDATE.outerjoin(_ANNOTATION, a.candidate_id == c.id) if unlabelled else _ANNOTATION
    code = a.human_check * 3 + func.coalesce(a.difficulty_eval, 2)  # one number per distinct label
    counts = (
        select(
            key.label("candidate_id"),
            func.count(a.id).label("n"),
            func.coalesce(func.sum(a.human_check), 0).label("accepted"),
            func.coalesce(func.sum(case((a.annotator_id.in_(_SYSTEM_ANNOTATORS), 1), else_=0)), 0).label("imported"),
            func.coalesce(func.sum(case((a.difficulty_eval == 1, 1), else_=0)), 0).label("hard"),
            *(func.coalesce(func.sum(case((code == value, 1), else_=0)), 0).label(f"code{value}")
              for value in _LABEL_CODES),
            func.min(code).label("low"),
            func.max(code).label("high"),
            func.max(j.candidate_id).label("decided"),
            func.max(j.human_check).label("decided_check"),
            func.max(j.difficulty_eval).label("decided_difficulty"),
        )
        .select_from(labels.outerjoin(_ADJUDICATION, j.candidate_id == key))
        .where(ids_in(key, candidate_ids, dialect=dialect))
        .group_by(key)
        .subquery()
    )
    decided, n, accepted = counts.c.decided.is_not(None), counts.c.n, counts.c.accepted
    modal = _greatest(*(counts.c[f"code{value}"] for value in _LABEL_CODES))  # labels equal to the most common
    tie, rejected = 2 * accepted == n, 2 * accepted < n
    return (
        update(_CANDIDATE)
        .where(c.id == counts.c.candidate_id)
        .values(
            label_count=n,
            imported_label_count=counts.c.imported,
            human_check=case((decided, counts.c.decided_check), (tie, None), (rejected, 0), else_=1),
            difficulty_eval=case((decided, counts.c.decided_difficulty), (tie | rejected, None),
                                 (2 * counts.c.hard >= accepted, 1), else_=0),
            label_source=case((decided, LabelSource.adjudicated.value), (tie, None),
                              (n == 1, LabelSource.single.value),
                              (counts.c.low == counts.c.high, LabelSource.unanimous.value),
                              else_=LabelSource.majority.value),
            agreement=case((n > 0, cast(modal, Float) / n), else_=None),
            updated_at=now,
        )
    )


# The labels' codes (human_check * 3 + difficulty_eval, 2 for none): not acceptable, simple, hard. The writer
# stores no other (`labels._LABELS`), so the most common label's count is the largest of these three counts.
_LABEL_CODES = (2, 3, 4)


def _greatest(*values: Any) -> Any:
    """The largest of these SQL values, in CASE (SQLite has no GREATEST, PostgreSQL's max takes one argument)."""
    first, *rest = values
    if not rest:
        return first
    other = _greatest(*rest)
    return case((first >= other, first), else_=other)
