"""What a judge run does: which judge (model and prompt version), which transcripts, how hard to push."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from annotator.database.models import Run
from annotator.runs import RunError
from annotator.runs.llm import RoleConfig
from annotator.settings import limits
from annotator.transcripts.judge.llm_prompt import DEFAULT_VERSION, template

JUDGE = "judge"  # the run's one role


@dataclass(frozen=True)
class JudgeOptions:
    """A judge run's options, stored on its `Run` row (the model under `models`, the prompt version in
    `prompt_version`, the rest under `options`), so a background process can pick it up.

    `limit` takes the first transcripts (by id) of those in scope, judged or not, so a run started again with the
    same options judges the same transcripts. A run over many transcripts is a job of parts (`parts`, else one per
    `limits.JUDGE_PART_TRANSCRIPTS`); a part judges the transcripts in scope whose ids are in its `transcripts`
    range (first, last).
    """

    model: RoleConfig
    prompt_version: str = DEFAULT_VERSION
    only_reviewed: bool = False
    limit: int | None = None
    concurrency: int = 8
    max_retries: int = 5
    backoff_base: float = 1.0
    parts: int | None = None  # how many parts to split the run into (None: by its size); not a setting of its own
    transcripts: tuple[int, int] | None = None  # a part's range of transcript ids

    def __post_init__(self) -> None:
        template(self.prompt_version)  # RunError naming the versions there are
        if not self.model.model.strip():
            raise RunError("the judge needs a model")
        limits.check_each({
            "concurrency": (self.concurrency, limits.CONCURRENCY), "limit": (self.limit, limits.LIMIT),
            "max_retries": (self.max_retries, limits.MAX_RETRIES), "backoff": (self.backoff_base, limits.BACKOFF),
            "parts": (self.parts, limits.PARTS),
        }, error=RunError)
        self.model.check()

    def roles(self) -> dict[str, RoleConfig]:
        return {JUDGE: self.model}

    def settings(self) -> dict[str, Any]:
        """The options kept in `Run.options` (the model and the prompt version have columns of their own)."""
        settings: dict[str, Any] = {
            "only_reviewed": self.only_reviewed, "limit": self.limit, "concurrency": self.concurrency,
            "max_retries": self.max_retries, "backoff_base": self.backoff_base,
        }
        if self.transcripts is not None:
            settings["transcripts"] = list(self.transcripts)
        return settings

    def part(self, first: int, last: int) -> JudgeOptions:
        """A part's options: the transcripts in scope with ids from `first` to `last` (the range is its scope)."""
        return replace(self, limit=None, parts=None, transcripts=(first, last))

    def models(self) -> dict[str, Any]:
        """What the run records about its model (no secrets: only the key's variable name)."""
        return {JUDGE: self.model.public()}

    @classmethod
    def from_run(cls, run: Run) -> JudgeOptions:
        models, settings = run.models or {}, dict(run.options or {})
        if settings.get("transcripts") is not None:
            settings["transcripts"] = tuple(settings["transcripts"])
        return cls(model=RoleConfig(**models[JUDGE]), prompt_version=run.prompt_version, **settings)
