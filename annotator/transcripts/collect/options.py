"""What an evaluate run does: which model, which prompt, which items, how many samples, how hard to push."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from annotator.database.models import Run
from annotator.runs import RunError
from annotator.runs.llm import RoleConfig
from annotator.settings import limits
from annotator.transcripts.collect.prompts import PROMPT_NAMES, PromptName
from annotator.transcripts.evaluation_set import ItemSet

MODEL = "model"  # the run's one role
ITEM_SETS: tuple[ItemSet, ...] = ("vetted", "all")


def sample_role(sample: int) -> str:
    return f"sample-{sample}"


@dataclass(frozen=True)
class EvaluateOptions:
    """What a run does. Stored on its `Run` row (the model under `models`, the rest under `options`), so a
    background process can pick it up.

    Sample 0 is the plain request (a one-sample run asks exactly the paper's request); sample i > 0 adds
    `seed: i` to the request, so each sample is a request of its own, and a cache entry of its own.
    """

    model: RoleConfig
    prompt: PromptName = "standard"
    data_source: str | None = None
    item_set: ItemSet = "vetted"
    samples: int = 1
    limit: int | None = None
    seed: int = 0  # which items a limit takes (`items.within_limit`)
    concurrency: int = 8
    max_retries: int = 5
    backoff_base: float = 1.0

    def __post_init__(self) -> None:
        if self.prompt not in PROMPT_NAMES:
            raise RunError(f"unknown prompt {self.prompt!r}: choose {' or '.join(PROMPT_NAMES)}")
        if self.item_set not in ITEM_SETS:
            raise RunError(f"unknown set {self.item_set!r}: choose {' or '.join(ITEM_SETS)}")
        limits.check_each({
            "samples": (self.samples, limits.SAMPLES), "concurrency": (self.concurrency, limits.CONCURRENCY),
            "limit": (self.limit, limits.LIMIT), "seed": (self.seed, limits.SEED),
            "max_retries": (self.max_retries, limits.MAX_RETRIES), "backoff": (self.backoff_base, limits.BACKOFF),
        }, error=RunError)
        self.model.check()

    def role(self, sample: int) -> RoleConfig:
        """How sample `sample` is asked."""
        if sample == 0:
            return self.model
        return replace(self.model, extra_body={**(self.model.extra_body or {}), "seed": sample})

    def roles(self) -> dict[str, RoleConfig]:
        return {sample_role(s): self.role(s) for s in range(self.samples)}

    def settings(self) -> dict[str, Any]:
        """The options kept in `Run.options` (the model and the prompt have columns of their own)."""
        return {
            "data_source": self.data_source, "item_set": self.item_set, "samples": self.samples,
            "limit": self.limit, "seed": self.seed, "concurrency": self.concurrency, "max_retries": self.max_retries,
            "backoff_base": self.backoff_base,
        }

    def models(self) -> dict[str, Any]:
        """What the run records about its model (no secrets: only the key's variable name)."""
        return {MODEL: self.model.public()}

    @classmethod
    def from_run(cls, run: Run) -> EvaluateOptions:
        models, settings = run.models or {}, run.options or {}
        return cls(model=RoleConfig(**models[MODEL]), prompt=run.prompt_version, **settings)  # type: ignore[arg-type]
