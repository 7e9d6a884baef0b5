"""Transcripts: model answers on the evaluation set (collected or imported), judged, reviewed, reported.

Items are ReliableMath's A set (solvable problems) and U set (vetted candidates); see `items`. The judge is
`judge` (one response; `answers`, `equivalence` and `deadline` are its parts); `verdicts.judge_transcripts`
judges stored transcripts and stores the verdicts; `storing` stores imported ones; `report` counts them.
"""

from annotator.transcripts.items import Item, ItemSet, evaluation_items, items_by_data_id, problem_data_id
from annotator.transcripts.verdicts import JudgeSummary, judge_transcripts

__all__ = [
    "Item",
    "ItemSet",
    "JudgeSummary",
    "evaluation_items",
    "items_by_data_id",
    "judge_transcripts",
    "problem_data_id",
]
