"""A run's counters, kept in memory by its process and written to its row with every heartbeat.

A run resumed (claimed again after its worker died or handed it back) counts its whole progress: the items it kept
before are its total less what is left (the kinds skip what is kept), and its row's request counters go on from
where they were. What a process prints at the end (`Summary`'s calls) is what that process sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlmodel import Session

from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import RunStatus
from annotator.runs.lifecycle import handing_back, worker_id
from annotator.runs.parts import MAX_STORED_ERRORS, roll_up

if TYPE_CHECKING:  # the client (and openai) is the run's process's business, not that of who lists runs
    from annotator.runs.llm import CallStats


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


# The row's request counters a resumed run goes on from.
_CALLS = ("requests", "cache_hits", "retries", "prompt_tokens", "completion_tokens")


class RunProgress:
    """What every kind of run counts: items done (`done` of `total`, a resumed run's whole), failures, unparseable
    answers, the first errors, and the client's request counters. A kind adds its own in a subclass
    (`kind_values`)."""

    def __init__(self, run_id: int, total: int, stats: CallStats) -> None:
        self.run_id = run_id
        self.total = total
        self.stats = stats
        self.done = 0
        self.failures = 0
        self.errors: list[dict[str, Any]] = []
        self.errors_dirty = False
        self.earlier: dict[str, int] | None = None  # a resumed run's request counters before (read at first save)

    def _resume(self, session: Session) -> dict[str, int]:
        """The row's counters before this process claimed it: a run claimed before (started before this claim)
        adds the items it kept then (its total less what is left now) to `done` and `total`."""
        row = session.execute(select(Run.problems_total, Run.started_at, Run.claimed_at,
                                     *(getattr(Run, name) for name in _CALLS))
                              .where(Run.id == self.run_id)).one_or_none()
        if row is None or row.started_at is None or row.claimed_at is None or row.started_at >= row.claimed_at:
            return dict.fromkeys(_CALLS, 0)
        kept = max(row.problems_total - self.total, 0)
        self.done, self.total = self.done + kept, self.total + kept
        return {name: getattr(row, name) or 0 for name in _CALLS}

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
        calls, earlier = self.stats.as_dict(), self.earlier or {}
        values: dict[str, Any] = {
            "problems_done": self.done, "problems_total": self.total, "failures": self.failures,
            "unparseable": self.unparseable, **{name: earlier.get(name, 0) + calls[name] for name in _CALLS},
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
        job is rolled up (`parts.roll_up`). Its total is its own (`extra`'s is what the kind selected: a resumed
        run's is the whole run's)."""
        if self.earlier is None:
            self.earlier = self._resume(session)
        extra.pop("problems_total", None)
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
