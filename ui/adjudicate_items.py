"""A candidate as Adjudicate's queues show it in the browser (`ui/components/queue`): Annotate's item
(`ui.queue_items.item`) under its data_id, with, for a dispute, every annotator's label and comment and every
reviewer's decision as tables of text; for the audit sample, without any label (the re-check is the reviewer's own).
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from annotator.database.vocabulary import SKIP_KEY, label_name
from annotator.labelling import adjudication, audit, queue
from ui.queue_items import ANNOTATE, Item, item

AUDIT_LABELS = {str(key): name.capitalize() for key, name in audit.DECISIONS.items()}
# The component's keys and words for each queue (its `page`): Annotate's keys for the disputes; 1 / 0 / S for the
# audit sample (an audit decision is sent as `human_check`, 1 truly unsolvable or 0 not).
DISPUTES_PAGE = {**ANNOTATE, "mine": "You decided this one.", "nothing": "Nothing to adjudicate"}
AUDIT_PAGE = {
    **ANNOTATE, "mine": "You audited this one.", "nothing": "Nothing to audit",
    "keys": [
        *({"key": key, "text": text, "kind": "primary" if key == "1" else "secondary",
           "decision": {"human_check": int(key)}} for key, text in AUDIT_LABELS.items()),
        {"key": SKIP_KEY, "text": "Skip", "action": "skip"},
    ],
}


def _labels(rows: list[dict[str, Any]], rewrite_type: str) -> dict[str, Any]:
    return {"title": "Labels", "columns": ["annotator", "label", "comment"],
            "rows": [[row["annotator"], label_name(row["human_check"], row["difficulty_eval"], rewrite_type),
                      row["comment"] or ""] for row in rows]}


def _decisions(rows: list[dict[str, Any]], rewrite_type: str) -> dict[str, Any]:
    return {"title": "Decisions", "columns": ["reviewer", "decision", "comment", "when", "stands"],
            "rows": [[row["reviewer"], label_name(row["human_check"], row["difficulty_eval"], rewrite_type),
                      row["comment"] or "", row["at"].strftime("%Y-%m-%d %H:%M:%S"), "yes" if row["current"] else "no"]
                     for row in rows]}


def _mine(history: list[dict[str, Any]], reviewer: str) -> dict[str, Any] | None:
    """The reviewer's decision that stands, for B (going back shows it)."""
    for row in history:
        if row["current"] and row["reviewer"] == reviewer:
            return {"human_check": row["human_check"], "difficulty_eval": row["difficulty_eval"],
                    "comment": row["comment"] or ""}
    return None


def dispute_item(session: Session, *, candidate_id: int, reviewer_id: int, reviewer: str) -> Item | None:
    """One dispute with its labels and decisions, None when the candidate is gone."""
    view = queue.load(session, candidate_id=candidate_id, annotator_id=reviewer_id)
    if view is None:
        return None
    built = item(view)
    rewrite_type = view.get("rewrite_type") or ""
    history = adjudication.decision_history(session, candidate_id=candidate_id)
    tables = [_labels(adjudication.dispute_labels(session, candidate_id=candidate_id), rewrite_type)]
    if history:
        tables.append(_decisions(history, rewrite_type))
    return {**built, "heading": str(view.get("data_id")), "tables": tables, "mine": _mine(history, reviewer)}


def audit_item(session: Session, *, candidate_id: int, reviewer_id: int) -> Item | None:
    """One candidate of the audit sample, its labels left out."""
    view = queue.load(session, candidate_id=candidate_id, annotator_id=reviewer_id)
    if view is None:
        return None
    return {**item({**view, "my_label": None}), "heading": str(view.get("data_id")), "labels": AUDIT_LABELS,
            "tables": [], "mine": None}
