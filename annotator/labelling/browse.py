"""Listing candidates page by page for the browse page, and a candidate's label history.

Reviewers and admins see everyone's labels, the resolved label, the label state (`LabelState`, from
`queries.label_state`, the words `stats` and the Overview use) and the number of labels; annotators see only
their own labels (not the resolved label, the state or the count, which would show them what others decided).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from annotator.accounts.auth import User
from annotator.accounts.policies import Capability, allows
from annotator.database.models import Annotation, AnnotationEvent, Annotator, Candidate
from annotator.database.queries import LabelTarget
from annotator.database.queries import label_state as state_of
from annotator.database.vocabulary import LabelState, MyLabels, Resolution
from annotator.labelling.queue import incomplete, label_target, vetted

PAGE_SIZE = 50
SNIPPET_CHARS = 160
# Label states everyone may filter on (their own labels), and the ones that reveal other people's labels: the
# label states (`LabelState`), then what the labels resolve to as `stats` counts it (`Resolution`).
OWN_STATES = tuple(choice.value for choice in MyLabels)
ALL_STATES = OWN_STATES + tuple(state.value for state in LabelState) + tuple(word.value for word in Resolution)
# What an event in the label history did, in the users' words.
ACTIONS = {"create": "labelled", "update": "changed", "adjudicate": "adjudicated"}
LABEL_FIELDS = ("human_check", "difficulty_eval")


def sees_everyone(user: User) -> bool:
    return allows(user, Capability.see_everyones_labels)


def label_states(user: User) -> tuple[str, ...]:
    return ALL_STATES if sees_everyone(user) else OWN_STATES


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    total: int
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


def _like(search: str) -> str:
    escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def list_candidates(
    session: Session,
    *,
    viewer: User,
    data_source: str | None = None,
    rewrite_type: str | None = None,
    label_state: str = MyLabels.any,
    annotator_id: int | None = None,
    search: str | None = None,
    page: int = 1,
    page_size: int = PAGE_SIZE,
) -> Page:
    """One page of candidates (by id) matching the filters, and how many match in all.

    `annotator_id` keeps candidates that annotator labelled; annotators may only ask for themselves.
    `search` matches data_id, the rewritten question and the changed condition (case-insensitive).
    """
    if label_state not in label_states(viewer):
        raise PermissionError(f"{viewer.role} cannot filter on label state {label_state!r}")
    if annotator_id is not None and annotator_id != viewer.id and not sees_everyone(viewer):
        raise PermissionError("annotators see only their own labels")
    mine = and_(Annotation.candidate_id == Candidate.id, Annotation.annotator_id == viewer.id)
    # The page's rows join my label; the filters' subqueries use their own alias of the table.
    labelled = aliased(Annotation)

    def labelled_by(annotator: int) -> Any:
        query = select(labelled.id).where(labelled.candidate_id == Candidate.id, labelled.annotator_id == annotator)
        return query.exists()

    conditions: list[Any] = []
    if data_source:
        conditions.append(Candidate.data_source == data_source)
    if rewrite_type:
        conditions.append(Candidate.rewrite_type == rewrite_type)
    target = label_target(session)
    state_condition = _state_condition(label_state, labelled_by(viewer.id), target)
    if state_condition is not None:
        conditions.append(state_condition)
    if annotator_id is not None:
        conditions.append(labelled_by(annotator_id))
    if search and search.strip():
        pattern = _like(search.strip().lower())
        conditions.append(
            or_(
                func.lower(Candidate.data_id).like(pattern, escape="\\"),
                func.lower(Candidate.rewritten_question).like(pattern, escape="\\"),
                func.lower(Candidate.rewritten_condition).like(pattern, escape="\\"),
            )
        )
    total = session.execute(select(func.count()).select_from(Candidate).where(*conditions)).scalar_one()
    page = max(1, page)
    query = (
        select(*_columns(viewer, target))
        .outerjoin(Annotation, mine)
        .where(*conditions)
        .order_by(Candidate.id)
        .limit(page_size)
        .offset((page - 1) * page_size)
    )
    rows = [row._asdict() for row in session.execute(query)]
    return Page(rows=rows, total=total, page=page, page_size=page_size)


def _columns(viewer: User, target: LabelTarget) -> list[Any]:
    """A page's columns: data id, state, my label and the number of labels first; the generation status last."""
    everyone = sees_everyone(viewer)
    columns: list[Any] = [Candidate.id, Candidate.data_id]
    columns += [state_of(target).label("state")] if everyone else []
    columns += [Annotation.human_check.label("my_human_check"), Annotation.difficulty_eval.label("my_difficulty_eval")]
    columns += [Candidate.label_count] if everyone else []
    columns += [
        Candidate.data_source,
        Candidate.rewrite_type,
        func.substr(Candidate.rewritten_question, 1, SNIPPET_CHARS).label("rewritten_question"),
    ]
    columns += [Candidate.human_check, Candidate.difficulty_eval] if everyone else []
    return [*columns, Candidate.status]


def _state_condition(label_state_name: str, mine: Any, target: LabelTarget) -> Any:
    """The filter for one of `ALL_STATES` (None for `MyLabels.any`); `mine` holds for candidates the viewer
    labelled."""
    if label_state_name in LabelState.__members__.values():
        return state_of(target) == label_state_name
    return {
        MyLabels.labelled: mine,
        MyLabels.not_labelled: ~mine,
        Resolution.vetted: vetted(target),
        Resolution.incomplete: incomplete(target),
        Resolution.rejected: Candidate.human_check == 0,
    }.get(label_state_name)


def label_history(session: Session, *, candidate_id: int, viewer: User) -> dict[str, list[dict[str, Any]]]:
    """The current labels and the event history of one candidate, as far as `viewer` may see them."""
    labels = (
        select(
            Annotator.name.label("annotator"),
            Annotation.human_check,
            Annotation.difficulty_eval,
            Annotation.comment,
            Annotation.updated_at,
        )
        .join(Annotator, Annotator.id == Annotation.annotator_id)
        .where(Annotation.candidate_id == candidate_id)
        .order_by(Annotation.id)
    )
    events = (
        select(Annotator.name.label("annotator"), AnnotationEvent.action, AnnotationEvent.old, AnnotationEvent.new,
               AnnotationEvent.at)
        .join(Annotator, Annotator.id == AnnotationEvent.annotator_id)
        .where(AnnotationEvent.candidate_id == candidate_id)
        .order_by(AnnotationEvent.id)
    )
    if not sees_everyone(viewer):
        labels = labels.where(Annotation.annotator_id == viewer.id)
        events = events.where(AnnotationEvent.annotator_id == viewer.id)
    return {
        "labels": [row._asdict() for row in session.execute(labels)],
        "events": [row._asdict() for row in session.execute(events)],
    }


def _shown(value: Any) -> str:
    return "—" if value is None else str(value)


def describe_change(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """What an event changed, in words: "human_check 1 → 0, comment changed"; a new label gives its values."""
    old, new = old or {}, new or {}
    if not old:
        parts = [f"{name} {_shown(new.get(name))}" for name in LABEL_FIELDS if new.get(name) is not None]
    else:
        parts = [f"{name} {_shown(old.get(name))} → {_shown(new.get(name))}" for name in LABEL_FIELDS
                 if old.get(name) != new.get(name)]
    before, after = old.get("comment"), new.get("comment")
    if before != after:
        parts.append("comment added" if not before else "comment removed" if not after else "comment changed")
    return ", ".join(parts) or "nothing"


def history_rows(events: list[dict[str, Any]]) -> list[dict[str, str]]:
    """`label_history`'s events as a table people read: who, when (UTC), what they did (a reviewer replacing another
    one's decision "overrode NAME's decision"), what changed and the comment the label or decision was given then
    (an overridden decision's comment stays in its own row)."""
    rows = []
    decided_by = None  # who gave the decision standing before this event
    for event in events:
        what = ACTIONS.get(event["action"], event["action"])
        if event["action"] == "adjudicate":
            if decided_by is not None and decided_by != event["annotator"]:
                what = f"overrode {decided_by}'s decision"
            decided_by = event["annotator"]
        rows.append({
            "who": event["annotator"],
            "when": event["at"].strftime("%Y-%m-%d %H:%M:%S"),
            "what": what,
            "changed": describe_change(event["old"], event["new"]),
            "comment": (event["new"] or {}).get("comment") or "",
        })
    return rows


def annotators(session: Session) -> list[dict[str, Any]]:
    """Everyone who has labels or an account, for the annotator filter (reviewers and admins)."""
    rows = session.execute(select(Annotator.id, Annotator.name).order_by(Annotator.name))
    return [row._asdict() for row in rows]
