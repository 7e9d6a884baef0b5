"""The pipeline's working values: a problem as the prompts need it, and a candidate in the making."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotator.construction.pipeline import parsing
from annotator.database.vocabulary import CandidateStatus, DataId

# Why a candidate was filtered, in the users' words (recorded as `llm_outputs["filtered_because"]`; several
# failed checks are joined with FILTER_REASON_JOIN).
REWRITE_UNREADABLE = "rewrite unreadable (M_R)"
NOT_ONE_CONDITION = "not exactly one key condition changed (M_I)"
VERIFICATION_UNREADABLE = "verification unreadable (M_I)"
STILL_SOLVABLE = "still solvable (M_R)"
UNSOLVABLE_UNREADABLE = "unsolvability verdict unreadable (M_R)"
FILTER_REASON_JOIN = "; "


@dataclass(frozen=True)
class ProblemInput:
    id: int
    data_source: str
    position: int
    question: str
    ground_truth: Any

    def data_id(self, rewrite_type: str, k: int) -> str:
        """The data_id of this problem's candidate for condition `k` rewritten by `rewrite_type`."""
        return str(DataId(self.data_source, self.position, rewrite_type, k))


@dataclass
class Draft:
    """A candidate in the making, with everything the models said about it."""

    problem: ProblemInput
    rewrite_type: str
    k: int
    condition: str | None
    rewritten_question: str = ""
    rewritten_condition: str | None = None
    unsolvable_reason: str | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    status: str = CandidateStatus.pending

    @property
    def data_id(self) -> str:
        return self.problem.data_id(self.rewrite_type, self.k)

    def filter(self, *reasons: str) -> None:
        """Keep the candidate out of the queue, recording why (`REWRITE_UNREADABLE`, ...)."""
        self.status = CandidateStatus.filtered
        self.outputs["filtered_because"] = FILTER_REASON_JOIN.join(reasons)

    @property
    def filtered_because(self) -> str | None:
        if self.status != CandidateStatus.filtered:
            return None
        return self.outputs.get("filtered_because") or "reason not recorded"

    def unparseable(self, step: str, error: parsing.ParseError) -> None:
        self.outputs.setdefault("parse_errors", []).append({"step": step, "error": str(error)})


def answer_text(ground_truth: Any) -> str:
    """The original answer as the prompts show it: 142.0 -> "142", ["9.6\\n"] -> "9.6"."""
    if isinstance(ground_truth, float) and ground_truth.is_integer():
        return str(int(ground_truth))
    if isinstance(ground_truth, list):
        return ", ".join(answer_text(item) for item in ground_truth)
    return str(ground_truth).strip() if ground_truth is not None else ""
