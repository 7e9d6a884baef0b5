"""The unit a reader hands to the importer: one input file and its records."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from annotator.formats._records import CandidateRecord, ProblemRecord


@dataclass
class SourceFileInfo:
    """A file as the database remembers it (see `models.SourceFile`)."""

    format: str
    name: str
    kind: str
    sha256: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportPart:
    path: str
    records: Iterable[ProblemRecord | CandidateRecord]
    source_file: SourceFileInfo | None = None
