"""What a generate run does: the two models, which problems, which steps, how hard to push the endpoint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotator.construction.pipeline.prompts import DEFAULT_VERSION, REWRITE_TYPES
from annotator.database.models import Run
from annotator.runs import RunError
from annotator.runs.llm import RoleConfig
from annotator.settings import limits

EXTRACT, REWRITE = "extract", "rewrite"  # the roles: M_I and M_R


@dataclass(frozen=True)
class GenerateOptions:
    """What a run does. Stored on its `Run` row, so a background process can pick it up."""

    extract: RoleConfig
    rewrite: RoleConfig
    source: str | None = None
    limit: int | None = None
    concurrency: int = 8
    steps: tuple[int, ...] = (1, 2)
    prompt_version: str = DEFAULT_VERSION
    rewrite_types: tuple[str, ...] = REWRITE_TYPES
    max_retries: int = 5
    backoff_base: float = 1.0
    max_conditions: int | None = None  # None: every condition M_I extracts (the release has k up to 6)

    def __post_init__(self) -> None:
        if not self.steps or set(self.steps) - {1, 2}:
            raise RunError(f"steps must be 1, 2 or 1,2; got {','.join(map(str, self.steps))}")
        if unknown := set(self.rewrite_types) - set(REWRITE_TYPES):
            raise RunError(f"unknown rewrite type(s) {', '.join(sorted(unknown))}")
        limits.check_each({
            "concurrency": (self.concurrency, limits.CONCURRENCY), "limit": (self.limit, limits.LIMIT),
            "max_conditions": (self.max_conditions, limits.MAX_CONDITIONS),
            "max_retries": (self.max_retries, limits.MAX_RETRIES), "backoff": (self.backoff_base, limits.BACKOFF),
        }, error=RunError)
        self.extract.check()
        self.rewrite.check()

    def settings(self) -> dict[str, Any]:
        """The options kept in `Run.options` (the models and steps have columns of their own)."""
        return {
            "source": self.source, "limit": self.limit, "concurrency": self.concurrency,
            "rewrite_types": list(self.rewrite_types), "max_retries": self.max_retries,
            "backoff_base": self.backoff_base, "max_conditions": self.max_conditions,
        }

    def models(self) -> dict[str, Any]:
        """Per role, what the run records about its model (no secrets: only the key's variable name)."""
        return {EXTRACT: self.extract.public(), REWRITE: self.rewrite.public()}

    def roles(self) -> dict[str, RoleConfig]:
        return {EXTRACT: self.extract, REWRITE: self.rewrite}

    def steps_text(self) -> str:
        return ",".join(map(str, sorted(self.steps)))

    @classmethod
    def from_run(cls, run: Run) -> GenerateOptions:
        models, settings = run.models or {}, run.options or {}
        return cls(
            extract=RoleConfig(**models[EXTRACT]), rewrite=RoleConfig(**models[REWRITE]),
            steps=tuple(int(s) for s in run.steps.split(",")), prompt_version=run.prompt_version,
            source=settings.get("source"), limit=settings.get("limit"),
            concurrency=settings.get("concurrency", 8),
            rewrite_types=tuple(settings.get("rewrite_types") or REWRITE_TYPES),
            max_retries=settings.get("max_retries", 5), backoff_base=settings.get("backoff_base", 1.0),
            max_conditions=settings.get("max_conditions"),
        )
