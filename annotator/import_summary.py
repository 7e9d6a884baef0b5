"""What an import did, as the command line prints it and the app shows it (`ImportSummary.text`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportSummary:
    files: list[str] = field(default_factory=list)
    problems_added: int = 0
    problems_updated: int = 0
    candidates_added: int = 0
    candidates_updated: int = 0
    labels_added: int = 0
    labels_updated: int = 0
    transcripts_added: int = 0
    unchanged: int = 0
    unlabelled: int = 0  # rows of an Excel batch not filled in yet
    # What the readers accepted although unusual, one line per file and kind, e.g.
    # "UMWP.jsonl: 2 unanswerable records with a non-null answer, kept as given".
    oddities: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The summary the command line prints and the app shows: counts, then one line per oddity."""
        counts = (
            f"imported {len(self.files)} file(s): {self.problems_added} problems and {self.candidates_added} "
            f"candidates added, {self.problems_updated + self.candidates_updated} updated, "
            f"{self.labels_added} labels added, {self.labels_updated} changed, {self.unchanged} unchanged"
            + (f", {self.unlabelled} sheet rows not labelled yet (skipped)" if self.unlabelled else "")
            + (f"; {self.transcripts_added} transcripts added and judged" if self.transcripts_added else "")
        )
        return "\n".join([counts, *self.oddities])
