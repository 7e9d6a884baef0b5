"""The kinds of run: what each one is (`RunKindSpec`) and the one list of them (`KINDS`).

A kind's module declares `SPEC = RunKindSpec(...)`: its options (a frozen dataclass with `roles()` and
`from_run(run)`), how a run of it is created (queued, with its options), described (its row in a runs table)
and executed (claimed, worked through, finished: a `Summary`). `KINDS` names each kind's module, and a spec is
loaded when it is first asked for: listing runs or starting a run's process loads no kind's code, and the kinds'
modules, which use `annotator.runs`, are imported by nothing in it.

Every kind is executed the same way: the CLI's command of the kind's name creates a run (or takes `--run-id` of
a queued one) and executes it in its process (`annotator/cli/_runs.py`); the app creates it and starts that
command in the background (`start_background`, `command`); the pages start and list runs through `ui.runs`.
A run's life (claim, heartbeat, cancel, stale, outcome) is the same for every kind (`lifecycle`, `health`).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotator.runs.lifecycle import RunError
from annotator.vocabulary import RunKind

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlmodel import Session

    from annotator.models import Run
    from annotator.runs.progress import Summary

# The one list: each kind of run and the module that declares its `SPEC`.
KINDS: dict[RunKind, str] = {
    RunKind.generate: "annotator.pipeline.generate",
    RunKind.evaluate: "annotator.transcripts.collect",
    RunKind.judge: "annotator.transcripts.llm_judge",
}


@dataclass(frozen=True)
class RunKindSpec:
    """One kind of run.

    Attributes:
        kind: its name: the `Run.kind` of its runs and the CLI command that executes one.
        unit: what it works through, one of them ("problem", "response"): the progress bar's, the progress
            line's and the runs table's word.
        options: its options' type (`from_run(run)` reads them back from a run).
        create: `(session, *, options, created_by)` -> a queued run (raises `RunError` naming what to fix).
        describe: `(run)` -> its row in the kind's runs table.
        execute: `async (engine, *, run_id, progress_callback)` -> the run's `Summary`, once it has ended.
    """

    kind: RunKind
    unit: str
    options: type
    create: Callable[..., Run]
    describe: Callable[[Run], dict[str, Any]]
    execute: Callable[..., Awaitable[Summary]]

    @property
    def units(self) -> str:
        return f"{self.unit}s"

    def run_here(self, engine: Engine, *, options: Any, created_by: str | None = None) -> Summary:
        """Create a run of this kind and execute it in this thread (tests' and benchmarks' way in)."""
        import asyncio

        from annotator.db import write_session

        with write_session(engine) as session:
            run_id = self.create(session, options=options, created_by=created_by).id
        assert run_id is not None
        return asyncio.run(self.execute(engine, run_id=run_id))

    def queue(self, session: Session, *, options: Any, created_by: str | None) -> int:
        """A queued run of this kind with `options` (the CLI's and the pages' way in); its models' key variables
        are checked first, so a missing one is told now rather than in the run's log. Returns its id."""
        for role in options.roles().values():
            role.api_key()  # raises LLMConfigError naming the variable
        run_id = self.create(session, options=options, created_by=created_by).id
        assert run_id is not None
        return run_id


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


def command(kind: str, *, run_id: int) -> list[str]:
    """The arguments after `python -m annotator` that execute queued run `run_id` of `kind` in a process of its
    own (no progress bar: its output is a log file); RunError for a kind that is not in `KINDS`."""
    if kind not in KINDS:
        raise RunError(f"run {run_id} is of an unknown kind {kind!r}")
    return [str(kind), "--run-id", str(run_id), "--no-progress"]
