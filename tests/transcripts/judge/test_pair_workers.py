"""A judge worker that runs past its hard limit on a pair ends; a new worker takes its place, that pair is
undecided and every other pair of its work still gets math-verify's verdict; a small job's pairs go to the
process's one shared worker."""

from __future__ import annotations

import os
from contextlib import ExitStack

from annotator.transcripts.judge.equivalence import verify_pairs
from annotator.transcripts.judge.pair_workers import Workers, shared_worker
from annotator.transcripts.judge.verdicts import PairVerifier

# Parsing a thousand-term sum of symbols takes seconds of Python: past a hard limit of one second.
SLOW = " + ".join(f"x_{{{k}}}" for k in range(1000))


def test_a_worker_past_its_hard_limit_is_replaced_and_only_its_pair_is_undecided() -> None:
    pairs = [("\\frac{1}{2}", "0.5"), ("12", "13"), ("5", SLOW), ("x^2 + 1", "1 + x^2"), ("(0, 1]", "(0, 1)")]
    with ExitStack() as stack:
        workers = Workers(stack, 1, hard_limit=1.0)
        verifier = PairVerifier(workers)
        verifier.ask_pairs(pairs)
        known = verifier.known()
        assert workers.replaced == 1
        assert known[("5", SLOW)] is None and verifier.undecided == 1
        others = [pair for pair in pairs if pair[1] != SLOW]
        assert [known[pair] for pair in others] == verify_pairs(others) == [True, False, True, False]
        # The new worker goes on serving the job.
        verifier.ask_pairs([("7", "7.0")])
        assert verifier.known()[("7", "7.0")] is True


def test_a_small_jobs_pairs_are_verified_in_the_process_shared_worker() -> None:
    """Without workers of its own (a small job), a verifier sends its pairs to the process's one shared worker, so
    that a pair stuck in C could be stopped there too; every such verifier uses the same worker."""
    pairs = [("\\frac{1}{2}", "0.5"), ("12", "13")]
    verifier = PairVerifier([])
    verifier.ask_pairs(pairs)
    assert [verifier.known()[pair] for pair in pairs] == [True, False]
    shared = shared_worker()
    assert verifier.workers is shared and PairVerifier([]).workers == []  # taken on the first pair, not before
    pids = {process.pid for process in shared[0]._processes.values()}  # type: ignore[attr-defined]
    assert pids and os.getpid() not in pids
    here = PairVerifier([], here=True)
    here.ask_pairs(pairs)
    assert here.workers == [] and [here.known()[pair] for pair in pairs] == [True, False]


def test_a_broken_worker_is_replaced_once_whoever_notices_it() -> None:
    with ExitStack() as stack:
        workers = Workers(stack, 1)
        broken = workers[0]
        first = workers.replace(0, broken)
        assert workers.replace(0, broken) is first and workers.replaced == 1
