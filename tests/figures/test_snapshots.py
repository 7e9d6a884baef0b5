"""`annotator.figures.snapshots.Snapshot`: the slow pages' figures stored in the database for every app server. Two
Snapshot objects on one database are two servers (each with its own lease holder and computation thread): the
figures one computed, the other shows at once; stale figures are recomputed by one server at a time while the
others show the last ones; a server that died holding the lease is taken over once it runs out."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update
from sqlmodel import Session

from annotator.database.engine import write_session
from annotator.database.models import Annotation, FigureSnapshot
from annotator.figures import fingerprints
from annotator.figures.pages import Figures
from annotator.figures.snapshots import QUICK_SECONDS, Reading, Snapshot, claim
from annotator.labelling import labels
from tests.support.candidates import add_candidates, add_user

KEY = "team"


class Server:
    """One app server's Snapshot of the label count, counting its own computations; `hold` keeps the next
    computation waiting (after it has read the data) until `release`."""

    def __init__(self, engine: Engine, *, ttl: float = 3600, patience: float = 0.0, fail: bool = False) -> None:
        self.computations = 0
        self.started = threading.Event()
        self.gate: threading.Event | None = None
        self.fail = fail
        figures = Figures(KEY, self._compute, fingerprints.labels_version)
        self.snapshot = Snapshot(engine, figures, ttl=ttl, patience=patience, lease=3.0)

    def _compute(self, session: Session) -> dict[str, Any]:
        self.computations += 1
        count = session.execute(select(func.count()).select_from(Annotation)).scalar_one()
        self.started.set()
        if self.gate is not None:
            self.gate.wait()
        if self.fail:
            raise RuntimeError("the figures could not be computed")
        return {"labels": count}

    def hold(self) -> threading.Event:
        self.gate = threading.Event()
        self.started.clear()
        return self.gate


@pytest.fixture
def label(engine: Engine):  # type: ignore[no-untyped-def]
    """Record one more label (a new candidate each time); the data's fingerprint moves."""
    person = add_user(engine, "ann")
    counter = iter(range(1000))

    def add() -> None:
        [candidate_id] = add_candidates(engine, 1, start=next(counter))
        with write_session(engine) as session:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=person.id, human_check=1,
                                difficulty_eval=0, seconds_spent=5.0)

    return add


def _seen(reading: Reading) -> tuple[Any, int, bool]:
    return reading.value, reading.generation, reading.refreshing


def test_a_second_or_restarted_server_shows_the_stored_figures_without_computing(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    first = Server(engine)
    assert _seen(first.snapshot.get()) == ({"labels": 1}, 1, False) and first.computations == 1
    second, restarted = Server(engine), Server(engine)
    for server in (second, restarted):
        reading = server.snapshot.get()
        assert _seen(reading) == ({"labels": 1}, 1, False) and server.computations == 0
        assert 0 <= reading.age < 60


def test_stale_figures_are_recomputed_by_one_server_while_the_others_show_the_last_ones(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    a, b = Server(engine), Server(engine)
    a.snapshot.get()
    label()  # the fingerprint moves: stale on every server
    release = a.hold()
    assert _seen(a.snapshot.peek()) == ({"labels": 1}, 1, True)  # A took the lease and computes
    a.started.wait()
    for _ in range(3):
        assert _seen(b.snapshot.peek()) == ({"labels": 1}, 1, True)  # B shows the last figures, marked
    assert b.computations == 0
    release.set()
    a.snapshot.wait()
    b_late = Server(engine, patience=60)
    assert _seen(b.snapshot.peek()) == ({"labels": 2}, 2, False) and _seen(b_late.snapshot.get())[:2] == (
        {"labels": 2}, 2)
    assert (a.computations, b.computations, b_late.computations) == (2, 0, 0)


def test_a_look_waits_for_the_new_figures_another_server_is_computing(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    a, b = Server(engine), Server(engine, patience=60)
    a.snapshot.get()
    label()
    release = a.hold()
    a.snapshot.peek()
    a.started.wait()
    seen: list[Reading] = []
    looking = threading.Thread(target=lambda: seen.append(b.snapshot.get()))
    looking.start()
    release.set()
    looking.join()
    assert _seen(seen[0]) == ({"labels": 2}, 2, False) and b.computations == 0


def test_figures_that_took_long_to_compute_are_not_waited_for(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    # Issue 21 item 3: at a million candidates Team's figures take seconds; a stale look shows the stored ones at
    # once (marked as being recomputed) instead of waiting its patience on every look.
    label()
    a = Server(engine, patience=60)
    a.snapshot.get()
    with write_session(engine) as session:
        session.execute(update(FigureSnapshot).where(FigureSnapshot.key == KEY).values(seconds=QUICK_SECONDS + 5))
    label()
    release = a.hold()
    # Let the computation finish as soon as it has read the data: a look that waited would see its figures.
    threading.Thread(target=lambda: (a.started.wait(), release.set()), daemon=True).start()
    assert _seen(a.snapshot.get()) == ({"labels": 1}, 1, True)
    a.snapshot.wait()
    assert _seen(a.snapshot.peek()) == ({"labels": 2}, 2, False)


def test_a_server_that_died_holding_the_lease_is_taken_over_when_it_runs_out(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    with write_session(engine) as session:  # a server took the lease for the first figures, then died
        assert claim(session, key=KEY, holder="gone:1:dead", lease=1.0)
    survivor = Server(engine)
    assert _seen(survivor.snapshot.get()) == ({"labels": 1}, 1, False) and survivor.computations == 1


def test_two_servers_looking_at_once_at_no_figures_compute_them_once(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    servers = [Server(engine) for _ in range(4)]
    seen: list[Reading] = []
    start = threading.Barrier(len(servers))

    def look(server: Server) -> None:
        start.wait()
        seen.append(server.snapshot.get())

    threads = [threading.Thread(target=look, args=(server,)) for server in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [_seen(reading) for reading in seen] == [({"labels": 1}, 1, False)] * 4
    assert sum(server.computations for server in servers) == 1


def test_recompute_now_waits_for_a_running_recomputation_then_computes_again(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    # The running one (on another server) may have read the data before the change the person wants to see.
    label()
    a, b = Server(engine), Server(engine)
    a.snapshot.get()
    label()
    release = a.hold()
    a.snapshot.peek()
    a.started.wait()
    label()  # made after A read the data: only a computation that starts later includes it
    done: list[Reading] = []
    pressed = threading.Thread(target=lambda: done.append(b.snapshot.refresh()))
    pressed.start()
    release.set()
    pressed.join()
    assert _seen(done[0]) == ({"labels": 3}, 3, False) and (a.computations, b.computations) == (2, 1)


def test_a_failing_recomputation_keeps_the_last_figures_and_says_why(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    Server(engine).snapshot.get()
    label()
    failing = Server(engine, patience=60, fail=True)
    reading = failing.snapshot.get()  # waits for its own failing recomputation
    assert _seen(reading) == ({"labels": 1}, 1, False) and reading.error == "RuntimeError"
    other = Server(engine)
    assert other.snapshot.get().error == "RuntimeError"  # every server says so (and this one tries again)
    other.snapshot.wait()
    assert Server(engine).snapshot.get().error is None  # until a recomputation succeeds


def test_no_figures_and_a_failing_computation_raise_to_the_page(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    with pytest.raises(RuntimeError, match="could not be computed"):
        Server(engine, fail=True).snapshot.get()
    assert Server(engine).snapshot.get().value == {"labels": 1}  # the lease was given back


def test_figures_older_than_their_time_to_live_are_recomputed(engine: Engine, label) -> None:  # type: ignore[no-untyped-def]
    label()
    a = Server(engine, ttl=0.0, patience=60)
    assert a.snapshot.get().generation == 1
    assert a.snapshot.get().generation == 2 and a.computations == 2
