"""`annotator.figures.fingerprints`: the fingerprints move with every change the Team and Report figures come from, and
not with reads (real SQLite file and real PostgreSQL: the `engine` fixture)."""

from __future__ import annotations

from sqlalchemy import Engine

from annotator.database.engine import read_session, write_session
from annotator.figures import fingerprints
from annotator.labelling import gold, labels, queue
from annotator.transcripts import clear_review, record_review
from tests.support.candidates import add_candidates, add_user
from tests.support.transcripts import add_transcripts


def _versions(engine: Engine) -> tuple[object, object]:
    with read_session(engine) as session:
        return fingerprints.labels_version(session), fingerprints.transcripts_version(session)


def test_labels_version_moves_with_labels_and_gold_items(engine: Engine) -> None:
    ids = add_candidates(engine, 2)
    ann = add_user(engine, "ann")
    seen = [_versions(engine)[0]]

    def changed(change) -> None:  # type: ignore[no-untyped-def]
        with write_session(engine) as session:
            change(session)
        version = _versions(engine)[0]
        assert version != seen[-1]
        seen.append(version)

    changed(lambda s: labels.record_label(s, candidate_id=ids[0], annotator_id=ann.id, human_check=1,
                                          difficulty_eval=0))
    changed(lambda s: labels.record_label(s, candidate_id=ids[0], annotator_id=ann.id, human_check=0,
                                          difficulty_eval=None))  # a label changed, not added
    changed(lambda s: gold.mark_gold(s, candidate_id=ids[1], human_check=1, difficulty_eval=0, created_by=None))
    changed(lambda s: gold.mark_gold(s, candidate_id=ids[1], human_check=1, difficulty_eval=1, created_by=None))
    changed(lambda s: gold.unmark_gold(s, candidate_id=ids[1]))
    assert seen[-1] == seen[2]  # the gold item gone again: the data (and so the figures) as before it
    changed(lambda s: gold.mark_gold(s, candidate_id=ids[0], human_check=1, difficulty_eval=1, created_by=None))
    first_gold = seen[-1]
    changed(lambda s: gold.unmark_gold(s, candidate_id=ids[0]))
    changed(lambda s: gold.mark_gold(s, candidate_id=ids[1], human_check=1, difficulty_eval=1, created_by=None))
    # Another item gold with the same label: other figures (who labelled it), another version.
    assert seen[-1] != first_gold
    assert _versions(engine)[0] == seen[-1]  # reading changes nothing


def test_transcripts_version_moves_with_transcripts_reviews_and_labels(engine: Engine) -> None:
    before = _versions(engine)[1]
    [tid] = add_transcripts(engine, [{}])
    added = _versions(engine)[1]
    rev = add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        record_review(session, transcript_id=tid, annotator_id=rev.id, verdict="S", tags=["no final answer"])
    reviewed = _versions(engine)[1]
    with write_session(engine) as session:
        clear_review(session, transcript_id=tid, annotator_id=rev.id)
    cleared = _versions(engine)[1]
    ann = add_user(engine, "ann")
    [candidate_id] = add_candidates(engine, 1, start=50)
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=candidate_id, annotator_id=ann.id, human_check=1, difficulty_eval=1)
    labelled = _versions(engine)[1]
    assert len({before, added, reviewed, cleared, labelled}) == 5
    assert _versions(engine)[1] == labelled


def test_overview_version_moves_with_labels_candidates_and_labels_per_candidate(engine: Engine) -> None:
    def version() -> object:
        with read_session(engine) as session:
            return fingerprints.overview_version(session)

    seen = [version()]
    [candidate_id] = add_candidates(engine, 1)  # a problem and its candidate added
    seen.append(version())
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=candidate_id, annotator_id=ann.id, human_check=1, difficulty_eval=0)
    seen.append(version())
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=3)  # the same label no longer completes the candidate
    seen.append(version())
    assert len(set(seen)) == 4
    assert version() == seen[-1]  # reading changes nothing
