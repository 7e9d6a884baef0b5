"""Reviewing transcripts: a person's decisions on the judge's verdicts, and the review queue."""
