"""The review queue read a page at a time from its index (issue 21, item 3): the walk is the queue's order, its
size what the filters hold, a transcript reviewed meanwhile is not shown twice, and the order is the one the SQL
expressions define (`tables.QUEUE_PART`, `tables.QUEUE_WITHIN`), checked here against a computation in Python.

Every test runs on a real SQLite file and a real throwaway PostgreSQL (`engine` fixture).
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.light_tables import SAMPLE_RANK_MODULUS
from annotator.database.models import Transcript
from annotator.transcripts import ReviewQueue, queue_reason, record_review, review_options, review_queue
from annotator.transcripts.review.decisions import REASONS
from annotator.transcripts.review.queue import sample_start
from tests.support.candidates import add_user
from tests.support.transcripts import add_transcripts

SPECS = ([{"judge_class": "incorrect"}] * 9 + [{"judge_class": "unmatched"}, {"judge_class": None, "judge": None}]
         + [{"judge_class": "unsolvable", "rules_disagree": True}] * 2
         + [{"judge_class": "incorrect", "model": "model-b"}] * 4
         + [{"judge_class": "incorrect", "prompt": "reliable"}])


def _rank(transcript_id: int) -> int:
    """`tables.SAMPLE_RANK` in Python."""
    step = transcript_id * 48271 % SAMPLE_RANK_MODULUS
    return ((step * step % SAMPLE_RANK_MODULUS) * 16807 + step) % SAMPLE_RANK_MODULUS


def _expected(engine: Engine, seed: int, model: str | None = None) -> list[int]:
    """The queue's order computed in Python from the rows: unreviewed first, then the part, then the id (the
    sample: the rank, counted round from the seed's start)."""
    start = sample_start(seed)
    with read_session(engine) as session:
        rows = session.execute(select(Transcript.id, Transcript.rules_disagree, Transcript.judge_class,
                                      Transcript.judge, Transcript.human, Transcript.model)).all()
    keys = []
    for row in rows:
        if model is not None and row.model != model:
            continue
        part = REASONS.index(queue_reason(rules_disagree=row.rules_disagree, judge_class=row.judge_class,
                                          judge=row.judge))
        within = (0, row.id) if part < 2 else (int(_rank(row.id) < start), _rank(row.id))
        keys.append((row.human is not None, part, *within, row.id))
    return [key[-1] for key in sorted(keys)]


def test_the_walk_is_the_queue_order_page_by_page(engine: Engine) -> None:
    tids = add_transcripts(engine, SPECS)
    rev = add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        record_review(session, transcript_id=tids[0], annotator_id=rev.id, verdict="S")
        record_review(session, transcript_id=tids[11], annotator_id=rev.id, verdict="F")
    for seed in (0, 1, 2, 77):
        with read_session(engine) as session:
            whole = review_queue(session, seed=seed)
            queue = ReviewQueue.open(session, seed=seed, page=3)  # several pages, each a range of the index
            walked = [queue.id_at(session, position) for position in range(len(SPECS) + 2)]
            only_b = review_queue(session, seed=seed, model="model-b")
        assert whole == _expected(engine, seed) and len(queue) == len(SPECS)
        assert walked == [*whole, None, None]
        assert only_b == _expected(engine, seed, model="model-b") and len(only_b) == 4
    assert whole[:3] == [tids[12], tids[9], tids[10]] and whole[-2:] == _expected(engine, 77)[-2:]
    with read_session(engine) as session:
        starts = {tuple(review_queue(session, seed=seed)[3:6]) for seed in range(6)}
    assert len(starts) > 1  # reviewers' samples start in different places


def test_a_transcript_reviewed_during_the_walk_shows_once(engine: Engine) -> None:
    """Reviewing moves a transcript to the reviewed end of the queue; the walk, read on page by page, does not
    show it again there."""
    tids = add_transcripts(engine, [{}] * 7)
    rev = add_user(engine, "rev", role="reviewer")
    with read_session(engine) as session:
        queue = ReviewQueue.open(session, seed=3, page=2)
    shown = []
    position = 0
    while True:
        with write_session(engine) as session:
            transcript_id = queue.id_at(session, position)
            if transcript_id is None:
                break
            record_review(session, transcript_id=transcript_id, annotator_id=rev.id, verdict="F")
        shown.append(transcript_id)
        position += 1
    assert sorted(shown) == sorted(tids) and len(queue) == 7


def test_the_filter_lists_and_an_empty_queue(engine: Engine) -> None:
    with read_session(engine) as session:
        empty = ReviewQueue.open(session, seed=1)
        assert (len(empty), empty.id_at(session, 0), review_options(session)) == (0, None, {"model": [], "prompt": []})
    add_transcripts(engine, SPECS)
    with read_session(engine) as session:
        assert review_options(session) == {"model": ["model-a", "model-b"], "prompt": ["reliable", "standard"]}
        assert len(ReviewQueue.open(session, seed=1, model="model-a", prompt="reliable")) == 1
