"""Metrics over labels and verdicts: inter-annotator agreement (`agreement`, over the coefficients listed in
`registry`, one module each: `percent`, `alpha`, `fleiss`, `ac1`; `cohen` for pairs), intervals and tests
(`intervals`)."""

from annotator.figures.agreement.agreement import agreement, label_agreement
from annotator.figures.agreement.ratings import Ratings
from annotator.figures.agreement.registry import COEFFICIENTS

__all__ = ["COEFFICIENTS", "Ratings", "agreement", "label_agreement"]
