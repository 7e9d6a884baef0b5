"""A candidate as the browser's queue component shows it (`ui/components/queue`): text and typeset math only.

What Annotate shows of a candidate (`annotator.labelling.queue.load`'s view): the heading, the two questions with
the diff, the other fields, the verdicts and the three sections the annotator may open (guideline, solution,
model outputs), every data field as `ui.rich_text` runs. Built once per candidate when it is claimed ahead.
"""

from __future__ import annotations

import json
from typing import Any

from annotator.database.vocabulary import BACK_KEY, LABELS, SKIP_KEY
from ui import rich_text
from ui.guidelines import guideline_for, umwp_category
from ui.view import GUIDELINE, MODEL_OUTPUTS, SHORT, SOLUTION

Item = dict[str, Any]

# Annotate's keys and sections for the component (its `page`): the decisions are `LABELS`', the names an item's
# rewrite type gives them in its `labels`.
ANNOTATE = {
    "noun": "candidate",
    "mine": "You labelled this one.",
    "sections": [GUIDELINE, SOLUTION, MODEL_OUTPUTS],
    "keys": [
        *({"key": label.key, "text": label.name("remove").capitalize(),
           "kind": "primary" if label.human_check else "secondary",
           "decision": {"human_check": label.human_check, "difficulty_eval": label.difficulty_eval}}
          for label in LABELS),
        {"key": SKIP_KEY, "text": "Skip", "action": "skip"},
        {"key": BACK_KEY, "text": "Back", "action": "back"},
    ],
}


def _checks(view: dict[str, Any]) -> list[Any]:
    checks = (view.get("extra") or {}).get("checks") or []
    return checks if isinstance(checks, list) else []


def _short(value: Any) -> str | None:
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str) and len(value) <= SHORT and "\n" not in value:
        return value
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def verdicts(view: dict[str, Any]) -> str:
    """The automatic checks' and the models' short verdicts on one line (the longer ones by name)."""
    parts = [f"{_text(check.get('name'))}: {_short(check.get('verdict'))}" for check in _checks(view)
             if isinstance(check, dict) and _short(check.get("verdict")) is not None]
    longer = []
    for key, value in (view.get("llm_outputs") or {}).items():
        short = _short(value)
        if short is None:
            longer.append(str(key))
        else:
            parts.append(f"{key}: {short}")
    if longer:
        parts.append(f"{', '.join(longer)} (in {MODEL_OUTPUTS})")
    return " · ".join(parts)


def _outputs(view: dict[str, Any]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for check in _checks(view):
        if isinstance(check, dict):
            detail = f" — {_text(check['detail'])}" if check.get("detail") else ""
            verdict = _text(check.get("verdict")) + detail
            lines.append({"name": _text(check.get("name")), "runs": rich_text.runs(verdict)})
        else:
            lines.append({"name": "", "runs": rich_text.runs(check)})
    for key, value in (view.get("llm_outputs") or {}).items():
        if isinstance(value, dict | list):
            lines.append({"name": str(key), "json": json.dumps(value, ensure_ascii=False, indent=1)})
        else:
            lines.append({"name": str(key), "runs": rich_text.runs(value)})
    return lines


def heading(view: dict[str, Any]) -> str:
    parts = [str(view.get(key)) for key in ("data_id", "data_source", "rewrite_type")]
    if view.get("status") not in (None, "pending"):
        parts.append(str(view["status"]))
    return " · ".join(parts)


def item(view: dict[str, Any]) -> Item:
    """One candidate for the component (see the module's docstring)."""
    rewrite_type = view.get("rewrite_type") or ""
    original, rewritten, changed = rich_text.diff(view.get("question"), view.get("rewritten_question"))
    fields = [
        ("Ground truth", view.get("ground_truth")), ("Rewrite type", rewrite_type),
        ("Extracted condition", view.get("extracted_condition")),
        ("Rewritten condition", view.get("rewritten_condition")), ("Unsolvable reason", view.get("unsolvable_reason")),
    ]
    if line := verdicts(view):
        fields.append(("Verdicts", line))
    guideline = guideline_for(rewrite_type, umwp_category=umwp_category(view.get("extra")))
    mine = view.get("my_label")
    return {
        "id": int(view["id"]),
        "data_id": str(view.get("data_id")),
        "heading": heading(view),
        "labels": {label.key: label.name(rewrite_type).capitalize() for label in LABELS},
        "columns": [
            {"title": "Original question · removed or changed", "runs": original},
            {"title": "Rewritten question · added or changed", "runs": rewritten,
             "badge": None if changed else "The rewritten question is identical to the original."},
        ],
        "fields": [[name, rich_text.runs(value)] for name, value in fields],
        "sections": {
            GUIDELINE: {"paragraphs": rich_text.guide(guideline)},
            SOLUTION: {"runs": rich_text.runs(view["solution"])} if view.get("solution") else {},
            MODEL_OUTPUTS: {"lines": _outputs(view)},
        },
        "mine": None if mine is None else {"human_check": mine["human_check"],
                                           "difficulty_eval": mine["difficulty_eval"],
                                           "comment": mine.get("comment") or ""},
    }
