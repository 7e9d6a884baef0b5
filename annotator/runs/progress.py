"""A run's counters, kept in memory by its process and written to its row with every heartbeat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlmodel import Session

from annotator.models import Run, utcnow
from annotator.runs.lifecycle import handing_back, worker_id
from annotator.runs.parts import MAX_STORED_ERRORS, roll_up
from annotator.vocabulary import RunStatus

if TYPE_CHECKING:  # the client (and openai) is the run's process's business, not that of who lists runs
    from annotator.llm import CallStats


@dataclass
class Summary:
    """What every kind of run reports when it ends; a kind adds its own counts in a subclass."""

    run_id: int
    status: RunStatus
    failures: int = 0
    calls: dict[str, int] = field(default_factory=dict)  # `CallStats.as_dict()`
    retry_reasons: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    errors: list[dict[str, Any]] = field(default_factory=list)

    def error_line(self, error: dict[str, Any]) -> str:
        """One kept error (`errors`) as the CLI prints it; a kind says which item it was."""
        return str(error.get("error"))

    def requests_text(self, *, unparseable: int | None = None) -> str:
        """The summary's lines about requests: counts, tokens, wall time, why it retried."""
        calls = self.calls
        return (
            f"requests {calls.get('requests', 0)} (retries {calls.get('retries', 0)}), "
            f"cache hits {calls.get('cache_hits', 0)}, failures {self.failures}, "
            + ("" if unparseable is None else f"unparseable {unparseable}, ")
            + f"tokens {calls.get('prompt_tokens', 0)} in / {calls.get('completion_tokens', 0)} out, "
            f"wall time {self.seconds:.1f}s"
            + "".join(f"\n  retried {count}x: {reason}" for reason, count in self.retry_reasons.items())
        )


class RunProgress:
    """What every kind of run counts: items done, failures, unparseable answers, the first errors, and the
    client's request counters. A kind adds its own in a subclass (`kind_values`)."""

    def __init__(self, run_id: int, total: int, stats: CallStats) -> None:
        self.run_id = run_id
        self.total = total
        self.stats = stats
        self.done = 0
        self.failures = 0
        self.errors: list[dict[str, Any]] = []
        self.errors_dirty = False

    @property
    def unparseable(self) -> int:
        return 0

    def error(self, entry: dict[str, Any]) -> None:
        """Keep a failure or an unreadable answer (the first `MAX_STORED_ERRORS`)."""
        if len(self.errors) < MAX_STORED_ERRORS:
            self.errors.append(entry)
            self.errors_dirty = True

    def kind_values(self) -> dict[str, Any]:
        """The columns (or `counters`) only this kind writes."""
        return {}

    def values(self) -> dict[str, Any]:
        calls = self.stats.as_dict()
        values: dict[str, Any] = {
            "problems_done": self.done, "failures": self.failures, "unparseable": self.unparseable,
            "requests": calls["requests"], "cache_hits": calls["cache_hits"], "retries": calls["retries"],
            "prompt_tokens": calls["prompt_tokens"], "completion_tokens": calls["completion_tokens"],
            "heartbeat_at": utcnow(), **self.kind_values(),
        }
        if handing_back():
            values["message"] = f"handing back: {worker_id()} was stopped; finishing the requests in flight"
        if self.errors_dirty:
            values["errors"] = list(self.errors)
            self.errors_dirty = False
        return values

    def save(self, session: Session, **extra: Any) -> bool:
        """Write the counters (the run's heartbeat); returns whether the run must stop: someone asked it to, or
        another worker has taken it over (this process was silent too long), whose run it then leaves alone. A part's
        job is rolled up (`parts.roll_up`)."""
        held = (Run.id == self.run_id) & (Run.worker == worker_id())
        if not session.execute(update(Run).where(held).values(**{**self.values(), **extra})).rowcount:
            return True
        cancel, job = session.execute(select(Run.cancel_requested, Run.parent_id).where(Run.id == self.run_id)).one()
        if job is not None:
            roll_up(session, job)
        return bool(cancel)

    def finish(self, session: Session, *, status: RunStatus, message: str | None) -> None:
        """Write the final counters, every kept error and the outcome. A run handed back (status queued: its worker
        was stopped, `execution.hand_back`) is let go: no holder, no heartbeat, for another worker to take at once."""
        self.errors_dirty = True
        if status == RunStatus.queued:
            self.save(session, status=status, message=message, worker=None, heartbeat_at=None, pid=None)
        else:
            self.save(session, status=status, message=message, finished_at=utcnow())
