"""Making candidates: ReliableMath's LLM pipeline, TreeCut, GSM-IC distractors, the demo project."""
