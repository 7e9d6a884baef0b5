"""A transcript as the browser's queue component shows it on Review (`ui/components/queue`): text and typeset math
only.

What Review shows of a transcript (`transcripts.load_review`'s view): the heading, the item (a candidate's two
questions with the diff and its fields, or a solvable problem and its ground truth), the response, the judge's
reading and the reasoning, every data field as `ui.rich_text` runs. The response and the reasoning are typeset, and
their math runs carry the source as written too, so that `M` shows either without asking the server. In blind mode
the model, the prompt and the judge are left out of the item altogether (not only hidden). Built once per
transcript when the browser is to hold it.
"""

from __future__ import annotations

from typing import Any

from annotator.database.vocabulary import Verdict
from annotator.transcripts.judge.rule_sets import registry as rule_sets
from ui import rich_text
from ui.queue_items import verdicts

Item = dict[str, Any]
VERDICT_NAMES = {Verdict.S.value: "Successful", Verdict.R.value: "Refused", Verdict.F.value: "Failed"}
# Review's keys for the component (its `page`): it walks the review queue in its order (`walk`); the number keys
# 1..9 toggle the tags the page sends with its data.
REVIEW = {
    "noun": "transcript",
    "walk": True,
    "sections": [],
    "verdicts": VERDICT_NAMES,
    "no_judge": "There is no judge's verdict to agree with here; press S, R or F.",
    "keys": [
        *({"key": verdict, "text": name, "kind": "primary", "decision": {"verdict": verdict}}
          for verdict, name in VERDICT_NAMES.items()),
        {"key": "Enter", "text": "Agree with the judge", "action": "agree"},
        {"key": "B", "text": "Back", "action": "back"},
        {"key": "N", "text": "Next", "action": "next", "once": True},
        {"key": "M", "text": "Typeset math", "action": "source", "once": True},
    ],
}


def _text(value: Any) -> list[dict[str, str]]:
    """Words we put together around data (no math in them): one text run."""
    return [{"t": str(value)}]


def _problem(view: dict[str, Any]) -> dict[str, Any]:
    """The item's `columns` and `fields`, as Annotate's (`queue_items.item`)."""
    item = view["item"]
    if view["candidate_id"] is None:
        return {"columns": [{"title": "Solvable problem", "runs": rich_text.runs(item.get("question"))}],
                "fields": [["Ground truth", rich_text.runs(item.get("ground_truth"))]]}
    original, rewritten, changed = rich_text.diff(item.get("question"), item.get("rewritten_question"))
    fields = [
        ("Ground truth", item.get("ground_truth")), ("Rewrite type", item.get("rewrite_type")),
        ("Extracted condition", item.get("extracted_condition")),
        ("Rewritten condition", item.get("rewritten_condition")), ("Unsolvable reason", item.get("unsolvable_reason")),
    ]
    if line := verdicts(item):
        fields.append(("Verdicts", line))
    return {
        "columns": [
            {"title": "Original question · removed or changed", "runs": original},
            {"title": "Rewritten question · added or changed", "runs": rewritten,
             "badge": None if changed else "The rewritten question is identical to the original."},
        ],
        "fields": [[name, rich_text.runs(value)] for name, value in fields],
    }


def _judged(view: dict[str, Any], *, blind: bool) -> tuple[list[list[Any]], str | None]:
    """The judge's reading as (name, runs) lines, and the rule sets' disagreement as a badge."""
    lines: list[list[Any]] = [["Extracted answer", rich_text.runs(view["extracted_answer"])]]
    if blind:
        return lines, None
    verdict = VERDICT_NAMES.get(view["judge"] or "", "—")
    lines.append(["Judge", _text(f"{view['judge_class'] or '—'} → {verdict} ({view['judge_rule'] or '—'})")])
    if view.get("judge_reason"):  # an LLM judge says why
        lines.append(["Why", rich_text.runs(view["judge_reason"])])
    badge = None
    if view["differs_from_reference"]:
        badge = ("another rule set differs" if view["judge_rule"] == rule_sets.REFERENCE_RULE
                 else "differs from the reference rule")
    return lines, badge


def item(view: dict[str, Any], *, blind: bool) -> Item:
    """One transcript for the component (see the module's docstring)."""
    source = view["item"]
    heading = " · ".join(str(part) for part in (view["data_id"], source["data_source"],
                                                 source["rewrite_type"] or "solvable"))
    who = "" if blind else f" · {view['model']} · {view['prompt']} prompt"
    judged, badge = _judged(view, blind=blind)
    reasoning = view.get("reasoning")
    return {
        "id": int(view["id"]),
        "data_id": str(view["data_id"]),
        "heading": heading,
        "reason": None if blind else view["reason"],
        "judge": None if blind else view["judge"],  # what Enter agrees with
        "mine": {"human": view["human"], "tags": list(view.get("tags") or []), "comment": view.get("comment") or ""},
        **_problem(view),
        "response": {"title": f"Response{who} · sample {int(view['sample'])}",
                     "runs": rich_text.runs(view["response"], source=True)},
        "judged": judged,
        "badge": badge,
        "reasoning": None if not reasoning else {"title": f"Reasoning ({len(reasoning):,} characters)",
                                                 "runs": rich_text.runs(reasoning, source=True)},
    }
