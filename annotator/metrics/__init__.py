"""Metrics over labels and verdicts: inter-annotator agreement (`agreement`)."""

from annotator.metrics.agreement import Ratings, agreement, label_agreement

__all__ = ["Ratings", "agreement", "label_agreement"]
