"""Transcripts: model answers on the evaluation set (collected or imported), judged, reviewed, reported.

Items are ReliableMath's A set (solvable problems) and U set (vetted candidates); see `items`.
"""

from annotator.transcripts.items import Item, ItemSet, evaluation_items, items_by_data_id, problem_data_id

__all__ = ["Item", "ItemSet", "evaluation_items", "items_by_data_id", "problem_data_id"]
