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
    pairs_undecided: int = 0  # distinct (ground truth, final answer) pairs the judge found no verdict on
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
            + (f" ({undecided_text(self.pairs_undecided)})" if self.pairs_undecided else "")
        )
        return "\n".join([counts, *self.oddities])


def undecided_text(pairs: int) -> str:
    """How many (ground truth, answer) pairs the judge gave no verdict on, as an import or a re-judging says it."""
    return (f"{pairs} distinct (ground truth, answer) pair{'s' if pairs != 1 else ''} ran out of time or were too "
            "costly to evaluate: judged incorrect")
