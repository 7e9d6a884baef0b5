"""Reviewing transcripts (issue 10, item 4): human verdicts over the judge's (ReliableMath Table 1's S/R/F),
their append-only events, the effective verdict, the review queue's order and the tag list.

Every test runs on a real SQLite file and a real throwaway PostgreSQL (`engine` fixture).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript, TranscriptEvent, utcnow
from annotator.transcripts import (
    DEFAULT_TAGS,
    EFFECTIVE_VERDICT,
    ReviewError,
    clear_review,
    effective_verdict,
    get_tags,
    load_review,
    record_review,
    review_options,
    review_queue,
    set_tags,
    tag_counts,
)
from tests.support.candidates import add_user
from tests.support.transcripts import add_transcripts


def _events(engine: Engine) -> list[tuple[int, int, str, dict | None, dict | None]]:
    with read_session(engine) as session:
        rows = session.execute(
            select(TranscriptEvent.transcript_id, TranscriptEvent.annotator_id, TranscriptEvent.action,
                   TranscriptEvent.old, TranscriptEvent.new).order_by(TranscriptEvent.id)
        )
        return [tuple(row) for row in rows]


def _review(engine: Engine, **kwargs: object) -> bool:
    with write_session(engine) as session:
        return record_review(session, **kwargs)  # type: ignore[arg-type]


def test_a_review_sets_the_verdict_and_appends_one_event_per_change(engine: Engine) -> None:
    [tid] = add_transcripts(engine, [{"judge_class": "incorrect"}])
    rev, other = add_user(engine, "rev", role="reviewer"), add_user(engine, "eve", role="reviewer")
    before = utcnow() - timedelta(seconds=1)
    assert _review(engine, transcript_id=tid, annotator_id=rev.id, verdict="R",
                   tags=[" arithmetic  error", "no final answer", "arithmetic error"], comment="  hedges  ")
    with read_session(engine) as session:
        row = session.get(Transcript, tid)
        assert (row.judge, row.human, row.tags, row.comment, row.reviewed_by) == (
            "F", "R", ["arithmetic error", "no final answer"], "hedges", rev.id)
        assert row.reviewed_at.replace(tzinfo=before.tzinfo) >= before
        at = session.execute(select(TranscriptEvent.at)).scalar_one()
        assert at.replace(tzinfo=before.tzinfo) >= before
    # The same review again, by someone else: nothing changes, nothing is appended, the author stays.
    assert not _review(engine, transcript_id=tid, annotator_id=other.id, verdict="R",
                       tags=["arithmetic error", "no final answer"], comment="hedges")
    # A changed verdict (same tags and comment) by the other reviewer is a second event.
    assert _review(engine, transcript_id=tid, annotator_id=other.id, verdict="S",
                   tags=["arithmetic error", "no final answer"], comment="hedges")
    first = {"human": "R", "tags": ["arithmetic error", "no final answer"], "comment": "hedges"}
    empty = {"human": None, "tags": None, "comment": None}
    assert _events(engine) == [
        (tid, rev.id, "review", empty, first),
        (tid, other.id, "review", first, {**first, "human": "S"}),
    ]
    with read_session(engine) as session:
        assert session.get(Transcript, tid).reviewed_by == other.id


def test_clearing_a_review_is_an_event_and_the_judge_counts_again(engine: Engine) -> None:
    tids = add_transcripts(engine, [{"judge_class": "unsolvable"}, {"judge_class": "unknown"}])
    rev = add_user(engine, "rev", role="reviewer")
    _review(engine, transcript_id=tids[0], annotator_id=rev.id, verdict="F", tags=[], comment=None)
    with write_session(engine) as session:
        assert clear_review(session, transcript_id=tids[0], annotator_id=rev.id)
        # Clearing what was never reviewed changes nothing.
        assert not clear_review(session, transcript_id=tids[1], annotator_id=rev.id)
    reviewed = {"human": "F", "tags": [], "comment": None}
    assert [event[2:] for event in _events(engine)] == [
        ("review", {"human": None, "tags": None, "comment": None}, reviewed),
        ("clear", reviewed, {"human": None, "tags": None, "comment": None}),
    ]
    with read_session(engine) as session:
        row = session.get(Transcript, tids[0])
        assert (row.human, row.reviewed_by, row.reviewed_at) == (None, None, None)
        assert effective_verdict(human=row.human, judge=row.judge) == "S"


def test_effective_verdict_is_the_human_one_else_the_judges(engine: Engine) -> None:
    """ReliableMath Eq. 1-2 count S/R/F; a reviewed transcript counts with the reviewer's verdict."""
    tids = add_transcripts(engine, [{"judge_class": "unsolvable"}, {"judge_class": "unknown"},
                                    {"judge_class": None, "judge": None}, {"judge_class": None, "judge": None}])
    rev = add_user(engine, "rev", role="reviewer")
    _review(engine, transcript_id=tids[0], annotator_id=rev.id, verdict="F")
    _review(engine, transcript_id=tids[3], annotator_id=rev.id, verdict="R")
    with read_session(engine) as session:
        in_sql = dict(session.execute(select(Transcript.id, EFFECTIVE_VERDICT).order_by(Transcript.id)).all())
        rows = session.execute(select(Transcript.id, Transcript.human, Transcript.judge)).all()
    in_python = {row.id: effective_verdict(human=row.human, judge=row.judge) for row in rows}
    assert in_sql == in_python == {tids[0]: "F", tids[1]: "R", tids[2]: None, tids[3]: "R"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"verdict": "X"}, "verdict must be one of S, R, F, got 'X'"),
        ({"verdict": "s"}, "verdict must be one of S, R, F, got 's'"),
        ({"tags": ["fine", "  "]}, "a tag must be non-empty text, got '  '"),
        ({"tags": ["fine", "inv\u202eented"]}, r"tag 'inv\\u202eented' holds U\+202E RIGHT-TO-LEFT OVERRIDE"),
        ({"tags": ["no\x00ne"]}, r"tag 'no\\x00ne' holds U\+0000 \(a control character\)"),
        ({"transcript_id": 10**6}, "transcript 1000000 does not exist"),
    ],
)
def test_a_bad_review_is_refused_and_stores_nothing(engine: Engine, change: dict, message: str) -> None:
    [tid] = add_transcripts(engine, [{}])
    rev = add_user(engine, "rev", role="reviewer")
    arguments = {"transcript_id": tid, "annotator_id": rev.id, "verdict": "S", "tags": ["fine"], **change}
    with pytest.raises(ReviewError, match=message):
        _review(engine, **arguments)
    assert _events(engine) == []
    with read_session(engine) as session:
        assert session.get(Transcript, tid).human is None


def test_queue_order_disagreements_then_unsure_then_a_seeded_sample_unreviewed_first(engine: Engine) -> None:
    """Issue 10 item 4: rule-set disagreements first, then the judge's uncertain cases (no boxed answer,
    parse failure / no verdict), then a random sample; reviewed transcripts after the unreviewed ones."""
    specs = (
        [{"judge_class": "incorrect"}] * 12  # the sample
        + [{"judge_class": "unmatched"}, {"judge_class": None, "judge": None}]  # the judge unsure
        + [{"judge_class": "unsolvable", "rules_disagree": True}]  # the rule sets disagree
        + [{"judge_class": "incorrect", "rules_disagree": True}]  # reviewed below
        + [{"judge_class": "unmatched", "model": "model-b"}, {"judge_class": "incorrect", "prompt": "reliable"}]
    )
    tids = add_transcripts(engine, specs)
    sample, unsure, disagree, reviewed = tids[:12], tids[12:14], tids[14], tids[15]
    other_model, other_prompt = tids[16], tids[17]
    rev = add_user(engine, "rev", role="reviewer")
    _review(engine, transcript_id=reviewed, annotator_id=rev.id, verdict="S")
    _review(engine, transcript_id=sample[0], annotator_id=rev.id, verdict="F")
    with read_session(engine) as session:
        queue = review_queue(session, model="model-a", prompt="standard", seed=1)
        again = review_queue(session, model="model-a", prompt="standard", seed=1)
        reseeded = review_queue(session, model="model-a", prompt="standard", seed=2)
        limited = review_queue(session, model="model-a", prompt="standard", seed=1, limit=4)
        everything = review_queue(session, seed=1)
        model_b = review_queue(session, model="model-b")
    assert queue[:3] == [disagree, *unsure]
    assert sorted(queue[3:14]) == sorted(sample[1:]) and queue[14:] == [reviewed, sample[0]]
    # The sample's order is random but fixed by the seed; another seed gives another order of the same ids.
    assert again == queue and queue[3:14] != sorted(queue[3:14])
    assert reseeded[:3] == queue[:3] and reseeded[3:14] != queue[3:14] and sorted(reseeded) == sorted(queue)
    assert limited == queue[:4]
    assert model_b == [other_model]
    assert set(everything) == set(tids) and everything[:4] == [disagree, *unsure, other_model]
    assert other_prompt in everything[4:-2]


def test_a_reviewed_transcript_keeps_its_place_in_the_sample_when_more_arrive(engine: Engine) -> None:
    first = add_transcripts(engine, [{}] * 10)
    with read_session(engine) as session:
        before = review_queue(session, seed=7)
    more = add_transcripts(engine, [{}] * 10, start=10)
    with read_session(engine) as session:
        after = review_queue(session, seed=7)
    assert [tid for tid in after if tid in first] == before and set(after) == set(first + more)


def test_tags_default_then_edited_in_the_settings(engine: Engine) -> None:
    with read_session(engine) as session:
        assert get_tags(session) == list(DEFAULT_TAGS) == [
            "invented a missing value", "ignored the contradiction", "answered the original question",
            "refused a solvable problem", "arithmetic error", "no final answer",
        ]
    with write_session(engine) as session:
        assert set_tags(session, tags=["misread a variable ", "assumed a value", "misread a variable"]) == [
            "misread a variable", "assumed a value"]
    with read_session(engine) as session:
        assert get_tags(session) == ["misread a variable", "assumed a value"]
    too_many = [f"t{i}" for i in range(10)]
    for bad, message in (([], "got 0"), (too_many, r"needs 1 to 9 tags \(the keys 1\.\.9\), got 10"),
                         (["x" * 101], "at most 100 characters"), (["ok", "bad\u2067"], r"holds U\+2067")):
        with pytest.raises(ReviewError, match=message), write_session(engine) as session:
            set_tags(session, tags=bad)
    with read_session(engine) as session:
        assert get_tags(session) == ["misread a variable", "assumed a value"]


def test_load_review_gives_the_candidate_or_the_solvable_problem(engine: Engine) -> None:
    tids = add_transcripts(engine, [{"judge_class": "unmatched", "model": "m1"},
                                    {"solvable": True, "judge_class": "correct", "judge": "S", "prompt": "reliable"}])
    with read_session(engine) as session:
        unsolvable = load_review(session, transcript_id=tids[0])
        solvable = load_review(session, transcript_id=tids[1])
        missing = load_review(session, transcript_id=10**6)
        options = review_options(session)
    assert missing is None
    assert unsolvable["data_id"] == "math_0_remove_1" and unsolvable["reason"] == "judge unsure"
    item = unsolvable["item"]
    assert item["rewritten_question"] == "Problem math 0: let $x > 0$. Find $x^2$."
    assert item["question"] == "Problem math 0: let $x > 0$. Find $x^2$ when $x = 1$."
    assert item["ground_truth"] == "1" and item["rewritten_condition"] == "removed $x = 1$"
    assert solvable["data_id"] == "math_1" and solvable["candidate_id"] is None and solvable["reason"] == "sample"
    assert solvable["item"]["question"] == "Problem math 1: let $x > 1$. Find $x^2$ when $x = 2$."
    assert solvable["item"]["rewrite_type"] is None and solvable["item"]["ground_truth"] == "4"
    assert options == {"model": ["m1", "model-a"], "prompt": ["reliable", "standard"]}


def test_tags_per_model_and_the_queue_of_one_model_and_tag(engine: Engine) -> None:
    """The Report's tags chart counts each transcript once per tag it carries; a bar opens Review's queue
    filtered by that model and tag (reviews recorded as the page records them)."""
    tids = add_transcripts(engine, [{}, {}, {}, {"model": "model-b"}, {}, {"judge_class": "unmatched"}])
    rev = add_user(engine, "rev", role="reviewer")
    invented, ignored = "invented a missing value", "ignored the contradiction"
    for tid, tags in zip(tids, [[invented], [invented, ignored], [ignored], [invented], []]):
        _review(engine, transcript_id=tid, annotator_id=rev.id, verdict="F", tags=tags)
    _review(engine, transcript_id=tids[5], annotator_id=rev.id, verdict="F", tags=[invented])
    with write_session(engine) as session:
        clear_review(session, transcript_id=tids[5], annotator_id=rev.id)  # cleared: its tags no longer count
    with read_session(engine) as session:
        counts = tag_counts(session)
        queue = review_queue(session, model="model-a", tag=invented, seed=3)
        every_model = review_queue(session, tag=invented, seed=3)
        none = review_queue(session, tag="arithmetic error")
    assert counts == [
        {"model": "model-a", "tag": ignored, "transcripts": 2},
        {"model": "model-a", "tag": invented, "transcripts": 2},
        {"model": "model-b", "tag": invented, "transcripts": 1},
    ]
    assert sorted(queue) == sorted(tids[:2]) and sorted(every_model) == sorted([*tids[:2], tids[3]])
    assert none == []
