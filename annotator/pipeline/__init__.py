"""LLM construction of candidates: ReliableMath Steps 1-2 (condition extraction, rewriting, verification)."""

from annotator.pipeline import runs
from annotator.pipeline.generate import (
    GENERATOR,
    GenerateOptions,
    RunError,
    RunSummary,
    create_run,
    execute_run,
    request_cancel,
    run_generation,
)
from annotator.pipeline.prompts import DEFAULT_VERSION, PromptSet, available_versions, load_prompts

__all__ = [
    "DEFAULT_VERSION", "GENERATOR", "GenerateOptions", "PromptSet", "RunError", "RunSummary", "available_versions",
    "create_run", "execute_run", "load_prompts", "request_cancel", "run_generation", "runs",
]
