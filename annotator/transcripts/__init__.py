"""Transcripts: model answers on the evaluation set (collected or imported), judged, reviewed, reported.

Items are ReliableMath's A set (solvable problems) and U set (vetted candidates); see `items`. The judge is
`judge` (one response; `answers`, `equivalence` and `deadline` are its parts); `verdicts.judge_transcripts`
judges stored transcripts and stores the verdicts; `storing` stores imported ones; `report` counts them. People
review the judge's verdicts in `review`. Collecting answers (`collect`) loads the LLM client: import it directly.
"""

from annotator.transcripts.items import Item, ItemSet, evaluation_items, items_by_data_id, problem_data_id
from annotator.transcripts.review import (
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
from annotator.transcripts.review_order import ReviewQueue, review_options, review_queue
from annotator.transcripts.verdicts import JudgeSummary, judge_transcripts

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
