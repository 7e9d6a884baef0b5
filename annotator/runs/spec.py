"""What a kind of run is (`RunKindSpec`): its own module, so that the kinds' modules, which declare one, import
nothing that names them (`kinds.KINDS` loads them by name)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotator.database.vocabulary import RunKind
from annotator.runs.lifecycle import ResumableRunError, RunError, resume_run

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlmodel import Session

    from annotator.database.models import Run
    from annotator.runs.progress import Summary


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

        from annotator.database.engine import write_session

        with write_session(engine) as session:
            run_id = self.create(session, options=options, created_by=created_by).id
        assert run_id is not None
        return asyncio.run(self.execute(engine, run_id=run_id))

    def queue(self, session: Session, *, options: Any, created_by: str | None) -> int:
        """A queued run of this kind with `options` (the CLI's and the pages' way in); its models' key variables
        are checked first, so a missing one is told now rather than in the run's log. A run with the same settings
        whose process has ended is queued again instead, with its progress (`lifecycle.resume_run`): running the
        same command again resumes it. Returns its id."""
        for role in options.roles().values():
            role.api_key()  # raises LLMConfigError naming the variable
        try:
            run_id = self.create(session, options=options, created_by=created_by).id
        except ResumableRunError as unfinished:
            return resume_run(session, unfinished.run)
        assert run_id is not None
        return run_id


def command(kind: str, *, run_id: int) -> list[str]:
    """The arguments after `python -m annotator` that execute queued run `run_id` of `kind` in a process of its
    own: a worker for that one run (its output is a log file); RunError for a kind that is not a `RunKind`
    (every `RunKind` has its line in `kinds.KINDS`: `tests/runs/test_kinds.py`)."""
    if kind not in RunKind.__members__.values():
        raise RunError(f"run {run_id} is of an unknown kind {kind!r}")
    return ["worker", "--once", "--run-id", str(run_id), "--kinds", str(kind)]
