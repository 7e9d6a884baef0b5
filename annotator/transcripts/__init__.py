"""Transcripts: model answers on the evaluation set (collected or imported), judged, reviewed, reported.

Items are ReliableMath's A set (solvable problems) and U set (vetted candidates); see `items`. People review
the judge's verdicts in `review`.
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
    review_options,
    review_queue,
    set_tags,
)

__all__ = [
    "DEFAULT_TAGS",
    "EFFECTIVE_VERDICT",
    "Item",
    "ItemSet",
    "ReviewError",
    "clear_review",
    "effective_verdict",
    "evaluation_items",
    "get_tags",
    "items_by_data_id",
    "load_review",
    "problem_data_id",
    "queue_reason",
    "record_review",
    "review_options",
    "review_queue",
    "set_tags",
]
