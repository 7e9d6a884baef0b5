"""The kinds of run: the one list of them (`KINDS`); what each one is, `RunKindSpec`, is in `spec`.

A kind's module declares `SPEC = RunKindSpec(...)`: its options (a frozen dataclass with `roles()` and
`from_run(run)`), how a run of it is created (queued, with its options), described (its row in a runs table)
and executed (claimed, worked through, finished: a `Summary`). `KINDS` names each kind's module, and a spec is
loaded when it is first asked for: listing runs or starting a run's process loads no kind's code, and the kinds'
modules, which use `annotator.runs`, are imported by nothing in it.

Every kind is executed the same way: the CLI's command of the kind's name creates a run (or takes `--run-id` of
a queued one) and executes it in its process (`annotator/cli/_runs.py`), or only queues it (`--queue`); workers
claim queued runs of the kinds they serve (`workers`, `python -m annotator worker`); the app queues a run and,
when no worker serves its kind, starts a worker for that one run in the background (`start`, `command`); the
pages start and list runs through `ui.runs`.
A run's life (claim, heartbeat, cancel, stale, outcome) is the same for every kind (`lifecycle`, `health`).
"""

from __future__ import annotations

import importlib

from annotator.database.vocabulary import RunKind
from annotator.runs.lifecycle import RunError
from annotator.runs.spec import RunKindSpec, command

# The one list: each kind of run and the module that declares its `SPEC`.
KINDS: dict[RunKind, str] = {
    RunKind.generate: "annotator.construction.pipeline.generate",
    RunKind.evaluate: "annotator.transcripts.collect.evaluate",
    RunKind.judge: "annotator.transcripts.judge.llm",
}


def spec(kind: str) -> RunKindSpec:
    """The spec of `kind` (its module is imported now); RunError for a kind that is not in `KINDS`."""
    try:
        module = KINDS[RunKind(kind)]
    except ValueError:
        raise RunError(f"unknown kind of run {kind!r}") from None
    loaded: RunKindSpec = importlib.import_module(module).SPEC
    return loaded


def specs() -> list[RunKindSpec]:
    """Every kind's spec, in `KINDS` order."""
    return [spec(kind) for kind in KINDS]


__all__ = ["KINDS", "RunKindSpec", "command", "spec", "specs"]
