"""LLM construction of candidates: ReliableMath Steps 1-2 (condition extraction, rewriting, verification).

Modules: `options` (GenerateOptions), `prompts` (the versioned prompt files), `parsing` (reading the
answers), `drafts` (a problem and a candidate in the making), `steps` (each LLM step: prompt, ask, parse),
`persistence` (the problems, the candidates there are, storing drafts), `progress` (counters and the run's
summary), `work` (one problem from requests to stored candidates), `generate` (a run's phases). The run
itself (queued, running, cancelled, stale) is `annotator.runs`.
"""

from annotator.construction.pipeline.generate import create_run, describe_run, execute_run, run_generation
from annotator.construction.pipeline.options import GenerateOptions
from annotator.construction.pipeline.persistence import GENERATOR, filtered_examples
from annotator.construction.pipeline.progress import RunSummary
from annotator.construction.pipeline.prompts import (
    DEFAULT_VERSION,
    PromptError,
    PromptSet,
    available_versions,
    load_prompts,
)
from annotator.runs import RunError, request_cancel

__all__ = [
    "DEFAULT_VERSION", "GENERATOR", "GenerateOptions", "PromptError", "PromptSet", "RunError", "RunSummary",
    "available_versions", "create_run", "describe_run", "execute_run", "filtered_examples", "load_prompts",
    "request_cancel", "run_generation",
]
