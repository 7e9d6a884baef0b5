"""A run's counters in its row (SQLite and PostgreSQL): a run claimed again after its worker died counts its whole
progress and goes on from its request counters; a run claimed for the first time counts from nothing."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine

from annotator import runs
from annotator.database.engine import read_session, write_session
from annotator.database.models import Run, utcnow
from annotator.database.vocabulary import RunKind, RunStatus
from annotator.runs.claiming import claim
from annotator.runs.llm import CallStats


def _add(engine: Engine, **values: object) -> int:
    with write_session(engine) as session:
        run = Run(kind=RunKind.evaluate, prompt_version="standard", **values)
        session.add(run)
        session.flush()
        assert run.id is not None
        return run.id


def _row(engine: Engine, run_id: int) -> tuple[int, int, int, int]:
    with read_session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run.problems_done, run.problems_total, run.requests, run.cache_hits


def _work(engine: Engine, run_id: int, *, left: int, answered: int) -> runs.RunProgress:
    """What a kind does with a claimed run: a progress of the items it selected (`left`), saved at once with that
    total, then every item done, `answered` of them by new requests and the rest from the cache."""
    progress = runs.RunProgress(run_id, left, CallStats())
    with write_session(engine) as session:
        assert not progress.save(session, problems_total=left)
    progress.stats.requests, progress.stats.cache_hits = answered, left - answered
    progress.done += left
    with write_session(engine) as session:
        progress.finish(session, status=RunStatus.succeeded, message=None)
    return progress


def test_a_run_taken_over_counts_its_whole_progress(engine: Engine) -> None:
    silent = utcnow() - runs.STALE_AFTER - timedelta(seconds=5)
    run_id = _add(engine, status=RunStatus.running, worker="elsewhere:1:x", started_at=silent, claimed_at=silent,
                  heartbeat_at=silent, problems_total=60, problems_done=45, requests=48, cache_hits=2)
    taken = claim(engine, kinds=["evaluate"])
    assert taken is not None and taken.run_id == run_id
    # 48 items were kept before (the last few not yet counted when its worker died): 12 are left.
    progress = runs.RunProgress(run_id, 12, CallStats())
    with write_session(engine) as session:
        assert not progress.save(session, problems_total=12)
    assert (progress.done, progress.total) == (48, 60) and _row(engine, run_id) == (48, 60, 48, 2)
    progress.stats.requests, progress.stats.cache_hits = 10, 2
    progress.done += 12
    with write_session(engine) as session:
        progress.finish(session, status=RunStatus.succeeded, message=None)
    assert _row(engine, run_id) == (60, 60, 58, 4)


def test_a_run_claimed_for_the_first_time_counts_from_nothing(engine: Engine) -> None:
    run_id = _add(engine, status=RunStatus.queued, problems_total=60)  # a part's expected total, say
    taken = claim(engine, kinds=["evaluate"])
    assert taken is not None and taken.run_id == run_id
    progress = _work(engine, run_id, left=50, answered=50)  # 10 were kept by an earlier run: not this one's
    assert (progress.done, progress.total) == (50, 50) and _row(engine, run_id) == (50, 50, 50, 0)
