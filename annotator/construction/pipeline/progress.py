"""A generate run's counters (`GenerateProgress`) and what it reports when it ends (`RunSummary`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotator.construction.pipeline.drafts import Draft, ProblemInput
from annotator.construction.pipeline.steps import ItemFailed, Unparseable
from annotator.database.vocabulary import RunStatus
from annotator.runs import RunProgress, Summary

FILTER_EXAMPLES = 3  # data_ids kept per reason a candidate was filtered


@dataclass
class RunSummary(Summary):
    problems: int = 0
    problems_done: int = 0
    candidates_written: int = 0  # inserted or changed
    candidates_unchanged: int = 0  # produced again exactly as stored, so not written
    candidates_filtered: int = 0  # of the candidates produced (written or unchanged)
    candidates_skipped: int = 0  # existing candidates left alone: labelled, or not made by the pipeline
    unparseable: int = 0

    def text(self) -> str:
        return (
            f"run {self.run_id}: {self.status}; {self.problems_done}/{self.problems} problems, "
            f"{self.candidates_written} candidates written, {self.candidates_unchanged} unchanged "
            f"({self.candidates_filtered} filtered, "
            f"{self.candidates_skipped} existing skipped)\n"
            + self.requests_text(unparseable=self.unparseable)
        )

    def error_line(self, error: dict[str, Any]) -> str:
        return f"{error.get('data_source')}_{error.get('position')} {error['step']}: {error['error']}"


class GenerateProgress(RunProgress):
    """The counters of a generate run: problems are its items; candidates written, unchanged, filtered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written = 0  # (database thread)
        self.unchanged = 0
        self.filtered = 0
        self.skipped = 0  # existing candidates the run must not touch (event loop)
        self.unparseable_problems = 0
        self.unparseable_answers = 0
        self.filtered_reasons: dict[str, dict[str, Any]] = {}  # reason -> {"count", "examples": data_ids}

    @property
    def unparseable(self) -> int:
        return self.unparseable_problems + self.unparseable_answers

    def kind_values(self) -> dict[str, Any]:
        return {
            "candidates_written": self.written, "candidates_filtered": self.filtered,
            "counters": {"candidates_unchanged": self.unchanged, "candidates_skipped": self.skipped,
                         "filtered_reasons": self.filtered_reasons},
        }

    def produced(self, draft: Draft) -> None:
        """Count a candidate the run produced (written or unchanged): filtered, and why, with a few examples."""
        reason = draft.filtered_because
        if reason is None:
            return
        self.filtered += 1
        entry = self.filtered_reasons.setdefault(reason, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < FILTER_EXAMPLES:
            entry["examples"].append(draft.data_id)

    def item_failed(self, problem: ProblemInput, failed: ItemFailed) -> None:
        self.failures += 1
        self.error({"problem_id": problem.id, "data_source": problem.data_source, "position": problem.position,
                    "step": failed.step, "kind": failed.error.kind, "error": str(failed.error)})

    def problem_unparseable(self, problem: ProblemInput, unparseable: Unparseable) -> None:
        self.unparseable_problems += 1
        self.error({"problem_id": problem.id, "data_source": problem.data_source, "position": problem.position,
                    "step": unparseable.step, "kind": "unparseable", "error": str(unparseable),
                    "response": unparseable.record.get("content", "")[:2000]})

    def summary(self, status: RunStatus, seconds: float) -> RunSummary:
        return RunSummary(
            run_id=self.run_id, status=status, problems=self.total, problems_done=self.done,
            candidates_written=self.written, candidates_unchanged=self.unchanged,
            candidates_filtered=self.filtered, candidates_skipped=self.skipped, failures=self.failures,
            unparseable=self.unparseable, calls=self.stats.as_dict(), retry_reasons=dict(self.stats.retry_reasons),
            seconds=seconds, errors=list(self.errors),
        )
