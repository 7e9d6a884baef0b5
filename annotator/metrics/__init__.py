"""Metrics over labels and verdicts: inter-annotator agreement (`agreement`)."""

from annotator.metrics.agreement import Ratings, agreement

__all__ = ["Ratings", "agreement"]
