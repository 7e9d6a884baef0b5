"""Queries over problems and candidates as plain functions (keyword-only arguments), for pages, CLI and exports.

Exports stream rows as dicts through Core selects, never ORM objects or whole-table DataFrames.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import repeat
from operator import is_
from typing import Any, Literal, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Insert,
    Select,
    TextClause,
    Update,
    and_,
    bindparam,
    case,
    func,
    nulls_last,
    or_,
    select,
    text,
)
from sqlmodel import Session

from annotator.database.models import (
    Annotation,
    AnnotationEvent,
    Annotator,
    Candidate,
    GoldLabel,
    Problem,
    Setting,
    SourceFile,
)
from annotator.database.raw_rows import STREAM_CHUNK
from annotator.database.vocabulary import RELEASE_REWRITE_ORDER, CandidateStatus, LabelSource, LabelState
from annotator.settings.limits import Range

CANDIDATE_COLUMNS = (
    Candidate.id,
    Candidate.data_id,
    Candidate.data_source,
    Candidate.rewrite_type,
    Candidate.condition_index,
    Candidate.extracted_condition,
    Candidate.rewritten_question,
    Candidate.rewritten_condition,
    Candidate.unsolvable_reason,
    Candidate.question,
    Candidate.ground_truth,
    Candidate.extra,
    Candidate.status,
    Candidate.position,
    Candidate.label_count,
    Candidate.human_check,
    Candidate.difficulty_eval,
    Candidate.label_source,
    Problem.position.label("problem_position"),
    Problem.source_id,
    Problem.solution,
    Problem.question.label("problem_question"),
    Problem.ground_truth.label("problem_ground_truth"),
)
PROBLEM_COLUMNS = (
    Problem.id,
    Problem.data_source,
    Problem.position,
    Problem.source_id,
    Problem.question,
    Problem.ground_truth,
    Problem.solution,
    Problem.extra,
)
_REWRITE_ORDER = case(
    *((Candidate.rewrite_type == rewrite_type.value, rank) for rank, rewrite_type in enumerate(RELEASE_REWRITE_ORDER)),
    else_=len(RELEASE_REWRITE_ORDER),
)


def of_source_and_type(query: Any, *, data_source: str | None, rewrite_type: str | None) -> Any:
    """`query` (which selects from or joins `Candidate`) kept to one data source and/or rewrite type; None or ""
    keeps all (the queue's, Team's and the CLI's `--data-source` / `--rewrite-type` filters)."""
    if data_source:
        query = query.where(Candidate.data_source == data_source)
    if rewrite_type:
        query = query.where(Candidate.rewrite_type == rewrite_type)
    return query


class LabelTarget(NamedTuple):
    """What the project asks of each candidate (`queue.label_target`): `labels` labels (`labels_per_candidate`, or
    with adaptive overlap its most labels, fewer completing one that they settle: `Candidate.settled`), those that
    came with an import or a pipeline (a system annotator's) among them or not (`imported_labels_count`)."""

    labels: int
    count_imported: bool


def counted_labels(target: LabelTarget) -> ColumnElement[int]:
    """A candidate's labels that fill its `target`: all of them, or its people's alone."""
    if target.count_imported:
        return Candidate.label_count
    return Candidate.label_count - Candidate.imported_label_count


def enough_labels(target: LabelTarget) -> ColumnElement[bool]:
    """Whether a candidate has the number of labels the project asks for (`target`)."""
    if target.count_imported:
        return Candidate.label_count >= target.labels
    return Candidate.label_count >= Candidate.imported_label_count + target.labels


def complete(target: LabelTarget) -> ColumnElement[bool]:
    """Whether a candidate has all the labels the project asks for (`target`), or fewer that settle it (adaptive
    overlap)."""
    return or_(enough_labels(target), Candidate.settled)


def label_state(target: LabelTarget) -> ColumnElement[str]:
    """The candidate's `LabelState` as one SQL expression (`target`: `queue.label_target`): Browse shows and
    filters on it, `stats` and the Overview count by it. A reviewer's decision wins; then no labels (unlabelled,
    or filtered / unverified by its status); then a tie on human_check (no resolved label); then all the labels
    asked for; else some. The queue asks only `complete` (the part of this its index can walk)."""
    unlabelled = Candidate.label_count == 0
    return case(
        (Candidate.label_source == LabelSource.adjudicated.value, LabelState.adjudicated.value),
        (and_(unlabelled, Candidate.status == CandidateStatus.filtered.value), LabelState.filtered.value),
        (and_(unlabelled, Candidate.status == CandidateStatus.unverified.value), LabelState.unverified.value),
        (unlabelled, LabelState.unlabelled.value),
        (Candidate.human_check.is_(None), LabelState.disputed.value),
        (complete(target), LabelState.complete.value),
        else_=LabelState.in_progress.value,
    )


def original_question_and_answer(candidate: dict[str, Any]) -> tuple[str, Any]:
    """A candidate row's original question and ground truth: its own when its source gave them, else its
    problem's (rows from `CANDIDATE_COLUMNS` or the queue's view carry both)."""
    question = candidate["question"] if candidate["question"] is not None else candidate["problem_question"]
    answer = candidate["ground_truth"] if candidate["ground_truth"] is not None else candidate["problem_ground_truth"]
    return question, answer


def data_sources(session: Session) -> list[str]:
    """Data sources in the order they were first added (the release's order: aime, amc, math, minerva)."""
    problem_first = select(Problem.data_source, func.min(Problem.id).label("first")).group_by(Problem.data_source)
    return [row.data_source for row in session.execute(problem_first.order_by("first"))]


def iter_problems(session: Session, *, data_source: str) -> Iterator[dict[str, Any]]:
    query = select(*PROBLEM_COLUMNS).where(Problem.data_source == data_source).order_by(Problem.position)
    for row in session.execute(query.execution_options(yield_per=STREAM_CHUNK)):
        yield row._asdict()


def candidates_query(
    *,
    data_source: str | None = None,
    where: ColumnElement[bool] | None = None,
    rewrite_types: Collection[str] | None = None,
    exclude_rewrite_types: Collection[str] = (),
    columns: tuple[Any, ...] = CANDIDATE_COLUMNS,
    order: Literal["release", "id"] = "release",
) -> Select[Any]:
    """Candidates joined with their problem's fields.

    `where` keeps the candidates it holds for (e.g. the vetted ones, `queue.vetted`), `rewrite_types` only those
    rewrite types, `exclude_rewrite_types` drops those (e.g. the solvable-by-design ones, which never belong in
    an unsolvable set). `release` order is the released files'
    order (file position, problem, rewrite type, k); `id` order is the order they were added, read straight
    off the primary key without a sort.
    """
    query = select(*columns).join(Problem, Problem.id == Candidate.problem_id)
    if data_source is not None:
        query = query.where(Candidate.data_source == data_source)
    if where is not None:
        query = query.where(where)
    if rewrite_types is not None:
        query = query.where(Candidate.rewrite_type.in_([str(t) for t in rewrite_types]))
    if exclude_rewrite_types:
        query = query.where(Candidate.rewrite_type.not_in([str(t) for t in exclude_rewrite_types]))
    if order == "release":
        return query.order_by(
            nulls_last(Candidate.position.asc()),
            Problem.position,
            _REWRITE_ORDER,
            Candidate.rewrite_type,
            Candidate.condition_index,
            Candidate.id,
        )
    return query.order_by(Candidate.id)


def iter_candidates(session: Session, **criteria: Any) -> Iterator[dict[str, Any]]:
    """Stream `candidates_query(**criteria)` as dicts, on the Core connection (no ORM objects)."""
    return iter_query(session, candidates_query(**criteria))


def iter_query(session: Session, query: Select[Any]) -> Iterator[dict[str, Any]]:
    """Stream any select as dicts, on the Core connection (no ORM objects)."""
    result = session.connection().execution_options(yield_per=STREAM_CHUNK).execute(query)
    keys = tuple(result.keys())
    for rows in result.partitions():  # fetchmany chunks: far cheaper per row than iterating the result
        for row in rows:
            yield dict(zip(keys, row))


def ids_in(column: Any, ids: Collection[int], *, dialect: str) -> TextClause:
    """`column IN (ids)` for integer ids (`int` makes sure) bound as one value (`_bound_in`)."""
    return _bound_in(column, [int(value) for value in ids], "BIGINT", dialect=dialect)


def texts_in(column: Any, values: Collection[str], *, dialect: str) -> TextClause:
    """`column IN (values)` for text values bound as one value (`_bound_in`)."""
    return _bound_in(column, list(values), "TEXT", dialect=dialect)


def _bound_in(column: Any, values: list[Any], array_type: str, *, dialect: str) -> TextClause:
    """`column IN (values)` with the values bound as one: a PostgreSQL array, a JSON array read by SQLite's
    `json_each`. One statement text for every chunk, so SQLAlchemy compiles it once and its statement cache stays
    small (values written into the SQL would make a new entry per chunk, and an import's memory grow with its
    size); no limit on bound parameters, and none of SQLAlchemy's work per value (an IN list is rendered as one
    parameter per value each time)."""
    target, name = f"{column.table.name}.{column.name}", f"in_{column.table.name}_{column.name}"
    if dialect == "postgresql":
        clause, bound = f"{target} = ANY(CAST(:{name} AS {array_type}[]))", values
    else:
        clause, bound = f"{target} IN (SELECT value FROM json_each(:{name}))", json.dumps(values)
    return text(clause).bindparams(bindparam(name, value=bound))


def execute_many(session: Session, statement: Insert | Update, rows: Sequence[Mapping[str, Any]]) -> None:
    """Run `statement` once per row (all rows with the same keys) in one executemany of the driver's own
    (`execute_rows`, with the rows as tuples)."""
    if rows:
        keys = list(rows[0])
        execute_rows(session, statement, keys, [tuple(row[key] for key in keys) for row in rows])


def execute_rows(session: Session, statement: Insert | Update, keys: Sequence[str], rows: Sequence[Sequence[Any]],
                 *, copy_into: str | None = None, copy_columns: Mapping[str, str] | None = None) -> None:
    """Run `statement` once per row, each row its values for `keys` in that order, in one executemany of the
    driver's own; on PostgreSQL, an insert that names its table as `copy_into` by COPY instead (each key its
    column's name, or the name `copy_columns` maps it to).

    Each value still goes through its column type's conversion (a timestamp's text on SQLite, `JSONText`), but
    a value that is the very object of the row before (one timestamp for a whole chunk) is converted once.
    SQLAlchemy's own executemany spends most of a bulk write in its per-row parameter work.
    """
    if not rows:
        return
    copy_columns = copy_columns or {}
    connection = session.connection()
    dialect = connection.dialect
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))
    names = list(compiled.positiontup or ()) if compiled.positional else list(compiled.binds)
    given = list(zip(*rows, strict=True))  # the values column by column, in `keys`' order
    at = {key: index for index, key in enumerate(keys)}
    columns: list[Sequence[Any]] = []
    for name in names:
        bind = compiled.binds[name]
        raw = given[at[bind.key]]
        convert = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if convert is not None and all(map(is_, raw, repeat(raw[0]))):  # one object for the column: converted once
            raw = [convert(raw[0])] * len(raw)
        elif convert is not None:
            done, last, converted = [], object(), None
            for value in raw:
                if value is not last:
                    last, converted = value, convert(value)
                done.append(converted)
            raw = done
        columns.append(raw)
    params: list[Any] = list(zip(*columns, strict=True))
    if copy_into is not None and dialect.name == "postgresql":
        _copy(connection, copy_into, [copy_columns.get(compiled.binds[name].key, compiled.binds[name].key)
                                      for name in names], params)
        return
    if not compiled.positional:
        params = [dict(zip(names, values, strict=True)) for values in params]
    # Through SQLAlchemy's driver-level call, which adds no per-row work but wraps the driver's errors (a
    # locked database is still `sqlalchemy.exc.OperationalError` to the callers that handle it).
    connection.exec_driver_sql(str(compiled), params)


def _copy(connection: Any, table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    """The rows into `table`'s `columns` by PostgreSQL's COPY: one stream, not a statement per row. The driver's
    errors are raised as SQLAlchemy's, as `exec_driver_sql` raises them."""
    import psycopg
    from sqlalchemy.exc import DBAPIError

    quoted = ", ".join(f'"{column}"' for column in columns)  # "at" and the like as column names
    sql = f"COPY {table} ({quoted}) FROM STDIN"
    cursor = connection.connection.driver_connection.cursor()
    try:
        with cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
    except psycopg.Error as exc:
        raise DBAPIError.instance(sql, None, exc, psycopg.Error) from exc
    finally:
        cursor.close()


def labels_query() -> Select[Any]:
    """Every annotator's every label, one row each: `data_id, annotator, human_check, difficulty_eval,
    comment, seconds_spent, created_at, updated_at, gold` (gold: the candidate has a gold label), in
    candidate order, then the order they were given."""
    return (
        select(
            Candidate.data_id,
            Annotator.name.label("annotator"),
            Annotation.human_check,
            Annotation.difficulty_eval,
            Annotation.comment,
            Annotation.seconds_spent,
            Annotation.created_at,
            Annotation.updated_at,
            GoldLabel.candidate_id.is_not(None).label("gold"),
        )
        .join(Candidate, Candidate.id == Annotation.candidate_id)
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .outerjoin(GoldLabel, GoldLabel.candidate_id == Annotation.candidate_id)
        .order_by(Annotation.candidate_id, Annotation.id)
    )


def label_events_query() -> Select[Any]:
    """The label history (`annotationevent`), oldest first: `data_id, annotator, action, at, old, new`
    (old and new as {human_check, difficulty_eval, comment}; None where there was or is no label)."""
    return (
        select(
            Candidate.data_id,
            Annotator.name.label("annotator"),
            AnnotationEvent.action,
            AnnotationEvent.at,
            AnnotationEvent.old,
            AnnotationEvent.new,
        )
        .join(Candidate, Candidate.id == AnnotationEvent.candidate_id)
        .join(Annotator, Annotator.id == AnnotationEvent.annotator_id)
        .order_by(AnnotationEvent.id)
    )


def source_file_options(session: Session, *, format: str) -> dict[str, dict[str, Any]]:
    """{file name: how it was serialised} of the imported files of one format."""
    rows = session.execute(select(SourceFile.name, SourceFile.options).where(SourceFile.format == format))
    return {row.name: row.options or {} for row in rows}


def source_files(session: Session, *, format: str) -> list[dict[str, Any]]:
    """The imported files of one format (name, kind, options), in the order they were first imported."""
    query = select(SourceFile.name, SourceFile.kind, SourceFile.options).where(SourceFile.format == format)
    return [row._asdict() for row in session.execute(query.order_by(SourceFile.id))]


def get_setting(session: Session, *, key: str, default: Any = None) -> Any:
    setting = session.get(Setting, key)
    return default if setting is None else setting.value


def bounded_setting(session: Session, *, key: str, allowed: Range, default: Any) -> Any:
    """A number setting; a stored value out of `allowed` (an older version's, or one written by hand) gives
    `default` and a warning in the log, so that one bad value does not break a page for everyone
    (`setting_problem` says what is wrong)."""
    value = get_setting(session, key=key, default=default)
    if value is None or allowed.contains(value):
        return default if value is None else value
    logging.getLogger(__name__).warning("setting %s: %s; using %r", key, setting_problem(session, key=key,
                                        allowed=allowed), default)
    return default


def setting_problem(session: Session, *, key: str, allowed: Range) -> str | None:
    """What is wrong with a stored number setting, or None if it is absent or fine."""
    value = get_setting(session, key=key)
    if value is None or allowed.contains(value):
        return None
    return f"the stored value {str(value)[:40]!r} is not {allowed.describe()}"


def set_setting(session: Session, *, key: str, value: Any) -> None:
    setting = session.get(Setting, key)
    if setting is None:
        session.add(Setting(key=key, value=value))
    else:
        setting.value = value
    session.flush()


def people_labels_query(*columns: Any, data_source: str | None, rewrite_type: str | None,
                        system_annotators: Collection[str]) -> Any:
    """`columns` of the labels (joined to their annotator) by candidate and order given, system annotators'
    (imports, pipelines) left out unless named, of one data source and rewrite type when given."""
    query = (
        select(*columns)
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .where(or_(Annotator.is_system.is_(False), Annotator.name.in_(list(system_annotators))))
        .order_by(Annotation.candidate_id, Annotation.id)
    )
    if data_source or rewrite_type:
        query = query.join(Candidate, Candidate.id == Annotation.candidate_id)
        query = of_source_and_type(query, data_source=data_source, rewrite_type=rewrite_type)
    return query
