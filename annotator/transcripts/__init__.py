"""Transcripts: model answers on the evaluation set (collected or imported), judged, reviewed, reported.

Items are ReliableMath's A set (solvable problems) and U set (vetted candidates); see `items`. The judge is
`judge` (one response; `answers`, `equivalence` and `deadline` are its parts); `verdicts.judge_transcripts`
judges stored transcripts and stores the verdicts; `storing` stores imported ones; `report` counts them. People
review the judge's verdicts in `review`. Collecting answers (`collect`) loads the LLM client: import it directly.

The names below are loaded when first asked for (PEP 562), not when the package is: `report` in a fresh
process (the CLI's) then loads neither the review nor the judge's modules (about 50 ms of its start-up).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotator.transcripts.evaluation_set import Item, ItemSet, evaluation_items, items_by_data_id, problem_data_id
    from annotator.transcripts.judge.verdicts import JudgeSummary, judge_transcripts
    from annotator.transcripts.review.decisions import (
        DEFAULT_TAGS,
        EFFECTIVE_VERDICT,
        ReviewError,
        clear_review,
        effective_verdict,
        get_tags,
        load_review,
        queue_reason,
        record_review,
        set_tags,
        tag_counts,
    )
    from annotator.transcripts.review.queue import ReviewQueue, review_options, review_queue

# name -> the module that defines it
_LAZY = {
    **dict.fromkeys(("Item", "ItemSet", "evaluation_items", "items_by_data_id", "problem_data_id"),
                    "annotator.transcripts.evaluation_set"),
    **dict.fromkeys(("DEFAULT_TAGS", "EFFECTIVE_VERDICT", "ReviewError", "clear_review", "effective_verdict",
                     "get_tags", "load_review", "queue_reason", "record_review", "set_tags", "tag_counts"),
                    "annotator.transcripts.review.decisions"),
    **dict.fromkeys(("ReviewQueue", "review_options", "review_queue"), "annotator.transcripts.review.queue"),
    **dict.fromkeys(("JudgeSummary", "judge_transcripts"), "annotator.transcripts.judge.verdicts"),
}

__all__ = [
    "DEFAULT_TAGS",
    "EFFECTIVE_VERDICT",
    "Item",
    "ItemSet",
    "JudgeSummary",
    "ReviewError",
    "ReviewQueue",
    "clear_review",
    "effective_verdict",
    "evaluation_items",
    "get_tags",
    "items_by_data_id",
    "judge_transcripts",
    "load_review",
    "problem_data_id",
    "queue_reason",
    "record_review",
    "review_options",
    "review_queue",
    "set_tags",
    "tag_counts",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
