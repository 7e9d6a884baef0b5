"""`annotator.figures.child`: figures a `Snapshot` computes in a child process. The child, not the server's
process, computes and stores them; a look returns the stored figures (or none yet) while the child is still at
work (it waits on a FIFO the test writes to); a child that raises or dies leaves the stored figures and the
reason in the users' words."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, update

from annotator.database.engine import write_session
from annotator.database.models import FigureSnapshot
from annotator.figures.child import ChildFailed
from annotator.figures.snapshots import QUICK_SECONDS, Snapshot
from annotator.labelling import labels
from tests.support import child_figures
from tests.support.candidates import add_candidates, add_user


@pytest.fixture
def label(engine: Engine) -> Callable[[], None]:
    """Record one more label (a new candidate each time): the data's fingerprint moves."""
    person = add_user(engine, "ann")
    counter = iter(range(1000))

    def add() -> None:
        [candidate_id] = add_candidates(engine, 1, start=next(counter))
        with write_session(engine) as session:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=person.id, human_check=1,
                                difficulty_eval=0, seconds_spent=5.0)

    return add


class Gate:
    """A FIFO that child computations wait on once armed, until released."""

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        os.mkfifo(path)
        self.path, self.monkeypatch = path, monkeypatch

    def arm(self) -> None:
        self.monkeypatch.setenv(child_figures.GATE_VARIABLE, str(self.path))  # the next child inherits it

    def release(self) -> None:
        with open(self.path, "w", encoding="utf-8") as fifo:  # opens once the child has opened it: it waits there
            fifo.write("go")
        self.monkeypatch.delenv(child_figures.GATE_VARIABLE)


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gate:
    return Gate(tmp_path / "gate", monkeypatch)


def _snapshot(engine: Engine, name: str) -> Snapshot:
    figures = getattr(child_figures, name)
    return Snapshot(engine, figures, ttl=3600, patience=0.0, lease=30.0, process=f"tests.support.child_figures:{name}")


def _slow(engine: Engine) -> None:
    """Mark the stored figures as slow to compute, as a big project's are: they are recomputed in a child."""
    with write_session(engine) as session:
        session.execute(update(FigureSnapshot).where(FigureSnapshot.key == child_figures.KEY)
                        .values(seconds=QUICK_SECONDS * 10))


def test_the_first_figures_come_from_a_child_and_a_look_does_not_wait_for_it(engine: Engine, label, gate) -> None:  # type: ignore[no-untyped-def]
    label()
    snapshot = _snapshot(engine, "COUNTING")
    gate.arm()
    first = snapshot.latest()  # the child is started and waits at the gate
    assert first.value is None and first.refreshing and first.generation == 0
    gate.release()
    snapshot.wait()
    stored = snapshot.latest()
    assert stored.value["labels"] == 1 and stored.generation == 1 and stored.error is None
    assert stored.value["pid"] != os.getpid()


def test_stale_slow_figures_show_at_once_while_a_child_recomputes_them(engine: Engine, label, gate) -> None:  # type: ignore[no-untyped-def]
    snapshot = _snapshot(engine, "COUNTING")
    label()
    snapshot.refresh()
    _slow(engine)
    label()
    gate.arm()
    reading = snapshot.get()
    assert reading.value["labels"] == 1 and reading.refreshing  # the last figures, while the child waits
    gate.release()
    snapshot.wait()
    newer = snapshot.peek()
    assert newer.value["labels"] == 2 and newer.generation == 2 and newer.value["pid"] != os.getpid()


@pytest.mark.parametrize(("name", "said"), [
    ("CRASHING", "the process computing the figures stopped (exit code 3)"),
    ("RAISING", "the figures' computation raised LookupError"),
])
def test_a_failing_child_leaves_the_stored_figures_and_says_why(engine: Engine, label, name: str, said: str) -> None:  # type: ignore[no-untyped-def]
    label()
    stored = _snapshot(engine, "COUNTING").refresh()
    _slow(engine)
    label()
    failing = _snapshot(engine, name)
    reading = failing.refresh()
    assert reading.value == stored.value and reading.generation == stored.generation
    assert reading.error == said
    assert failing.peek().error == said  # every server sees it, with the last figures


def test_no_figures_and_a_failing_child_say_why_without_raising_on_a_look(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    failing = _snapshot(engine, "CRASHING")
    failing.latest()
    failing.wait()
    reading = failing.latest()
    failing.wait()
    assert reading.value is None and reading.error == "the process computing the figures stopped (exit code 3)"
    with pytest.raises(ChildFailed, match="exit code 3"):
        failing.get()  # a page that waits for the first figures is told (Report words it)
