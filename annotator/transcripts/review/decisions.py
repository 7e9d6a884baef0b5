"""Reviewing transcripts: a person confirms or overrides the judge's verdict and tags how the model failed.

The latest review lives on the transcript (`human`, `tags`, `comment`, `reviewed_by`, `reviewed_at`); every
change is also appended to `transcriptevent` (who, when, old, new), and a review that changes nothing
appends nothing. The effective verdict is the human one where present, else the judge's.

The review queue shows first the transcripts whose verdict differs from the reference rule's
(`judge.rule_sets.registry`), then those the judge is unsure of (no boxed answer, or no verdict at all), then a
seeded random sample of the rest, with the ones nobody has reviewed yet before the reviewed ones (`review.queue`:
the order, read from its index).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, literal_column, select
from sqlmodel import Session

from annotator.database import names, queries
from annotator.database.light_tables import REVIEWED
from annotator.database.models import Candidate, Judgement, Problem, Transcript, TranscriptEvent, utcnow
from annotator.database.raw_rows import iter_raw
from annotator.database.vocabulary import JudgeClass, Verdict
from annotator.settings import limits
from annotator.transcripts.judge.rules import LLM_RULE, judge_version

REVIEW_TAGS = "review_tags"
DEFAULT_TAGS = (
    "invented a missing value",
    "ignored the contradiction",
    "answered the original question",
    "refused a solvable problem",
    "arithmetic error",
    "no final answer",
)
# The number keys 1..9 toggle tags on the Review page, so the list holds at most nine.
MAX_TAGS = int(limits.REVIEW_TAGS.high)
MAX_TAG_LENGTH = int(limits.TAG_LENGTH.high)

# Why a transcript is where it is in the queue, in queue order.
DIFFERS_FROM_REFERENCE = "differs from the reference rule"
JUDGE_UNSURE = "judge unsure"
SAMPLE = "sample"
REASONS = (DIFFERS_FROM_REFERENCE, JUDGE_UNSURE, SAMPLE)

# The effective verdict as a column, for queries that count verdicts (reports, exports).
EFFECTIVE_VERDICT = func.coalesce(Transcript.human, Transcript.judge)


class ReviewError(ValueError):
    """A review that breaks the rules: an unknown transcript, a verdict that is not S/R/F, a bad tag."""


def effective_verdict(*, human: str | None, judge: str | None) -> str | None:
    """The verdict that counts: the reviewer's where there is one, else the judge's (None: neither)."""
    return human if human is not None else judge


def queue_reason(*, differs_from_reference: bool | None, judge_class: str | None, judge: str | None) -> str:
    """Which part of the review queue a transcript belongs to (one of `REASONS`)."""
    if differs_from_reference:
        return DIFFERS_FROM_REFERENCE
    if judge is None or judge_class == JudgeClass.unmatched:
        return JUDGE_UNSURE
    return SAMPLE


def _clean_tags(tags: Sequence[str]) -> list[str]:
    """Tags without surrounding spaces, each once, in the order given."""
    cleaned: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            raise ReviewError(f"a tag must be non-empty text, got {tag!r}")
        tag = " ".join(tag.split())
        if (why := names.problem(tag)) is not None:
            raise ReviewError(f"tag {names.shown(tag, 40)} {why}")
        if len(tag) > MAX_TAG_LENGTH:
            raise ReviewError(f"tag {tag[:40]!r}...: at most {MAX_TAG_LENGTH} characters")
        if tag not in cleaned:
            cleaned.append(tag)
    return cleaned


def _checked_tags(tags: Sequence[Any]) -> list[str]:
    cleaned = _clean_tags(tags)
    if not cleaned or len(cleaned) > MAX_TAGS:
        raise ReviewError(f"the tag list needs 1 to {MAX_TAGS} tags (the keys 1..9), got {len(cleaned)}")
    return cleaned


def get_tags(session: Session) -> list[str]:
    """The project's hallucination tags, in the order the number keys 1..9 toggle them."""
    stored = queries.get_setting(session, key=REVIEW_TAGS, default=None)
    if stored is None:
        return list(DEFAULT_TAGS)
    try:
        if not isinstance(stored, list):
            raise ReviewError(f"expected a list of tags, got {type(stored).__name__}")
        return _checked_tags(stored)
    except ReviewError as exc:
        # One bad stored value (an older version's, or written by hand) must not break the Review page.
        logging.getLogger(__name__).warning("setting %s: %s; using the default tags", REVIEW_TAGS, exc)
        return list(DEFAULT_TAGS)


def set_tags(session: Session, *, tags: Sequence[str]) -> list[str]:
    """Replace the tag list (tags already on reviews stay on them); returns the list as stored."""
    cleaned = _checked_tags(tags)
    queries.set_setting(session, key=REVIEW_TAGS, value=cleaned)
    return cleaned


def _snapshot(transcript: Transcript) -> dict[str, Any]:
    """What an event records of a review."""
    return {"human": transcript.human, "tags": transcript.tags, "comment": transcript.comment}


def _locked(session: Session, transcript_id: int) -> Transcript:
    # Lock the row: two reviewers saving the same transcript at once each record their own old value.
    transcript = session.execute(
        select(Transcript).where(Transcript.id == transcript_id).with_for_update()
    ).scalar_one_or_none()
    if transcript is None:
        raise ReviewError(f"transcript {transcript_id} does not exist")
    return transcript


def _change(session: Session, transcript: Transcript, *, annotator_id: int, action: str, old: dict[str, Any],
            at: datetime | None = None, decision_id: str | None = None) -> bool:
    new = _snapshot(transcript)
    if new == old:
        return False
    now = at or utcnow()
    reviewed = new["human"] is not None
    transcript.reviewed_by = annotator_id if reviewed else None
    transcript.reviewed_at = now if reviewed else None
    session.add(TranscriptEvent(transcript_id=transcript.id, annotator_id=annotator_id, action=action, old=old,
                                new=new, at=now, decision_id=decision_id))
    session.flush()
    return True


def record_review(
    session: Session,
    *,
    transcript_id: int,
    annotator_id: int,
    verdict: str,
    tags: Sequence[str] = (),
    comment: str | None = None,
    at: datetime | None = None,
    decision_id: str | None = None,
) -> bool:
    """Set one transcript's human verdict, tags and comment and append the event; False if nothing changed.

    Call inside `write_session()` so that the read and the writes are one transaction. `at`: the time of the
    reviewer's key (else now), `decision_id`: the browser's id of the decision (`review.browser_review`), both
    kept on the event.

    Raises:
        ReviewError: the transcript does not exist, `verdict` is not S/R/F, or a tag is empty or too long.
    """
    if not isinstance(verdict, str) or verdict not in Verdict.__members__:
        raise ReviewError(f"verdict must be one of S, R, F, got {verdict!r}")
    cleaned = _clean_tags(tags)
    transcript = _locked(session, transcript_id)
    old = _snapshot(transcript)
    transcript.human = Verdict(verdict).value
    transcript.tags = cleaned
    transcript.comment = (comment or "").strip() or None
    return _change(session, transcript, annotator_id=annotator_id, action="review", old=old, at=at,
                   decision_id=decision_id)


def clear_review(session: Session, *, transcript_id: int, annotator_id: int, at: datetime | None = None,
                 decision_id: str | None = None) -> bool:
    """Remove the human review (the judge's verdict counts again) and append the event; False if there was none
    (`at`, `decision_id`: as for `record_review`)."""
    transcript = _locked(session, transcript_id)
    old = _snapshot(transcript)
    transcript.human = None
    transcript.tags = None
    transcript.comment = None
    return _change(session, transcript, annotator_id=annotator_id, action="clear", old=old, at=at,
                   decision_id=decision_id)


def as_list(tags: Any) -> list[Any]:
    """A raw row's tags (the driver may give the JSON text) as a list."""
    if isinstance(tags, str):
        tags = json.loads(tags)
    return tags if isinstance(tags, list) else []


def tag_counts(session: Session) -> list[dict[str, Any]]:
    """How many transcripts of each model carry each tag (`{model, tag, transcripts}`, by model then tag)."""
    counts: Counter[tuple[str, str]] = Counter()
    # Only a review sets tags: the reviewed transcripts' partial index finds them (`light_tables.REVIEWED`).
    query = select(Transcript.model, Transcript.tags).where(literal_column(REVIEWED), Transcript.tags.is_not(None))
    for row in iter_raw(session, query):
        counts.update((row["model"], tag) for tag in dict.fromkeys(as_list(row["tags"])) if isinstance(tag, str))
    return [{"model": model, "tag": tag, "transcripts": n} for (model, tag), n in sorted(counts.items())]


_TRANSCRIPT_COLUMNS = (
    Transcript.id, Transcript.data_id, Transcript.problem_id, Transcript.candidate_id, Transcript.model,
    Transcript.prompt, Transcript.sample, Transcript.response, Transcript.reasoning, Transcript.finish_reason,
    Transcript.extracted_answer, Transcript.judge_rule, Transcript.judge_version, Transcript.judge_class,
    Transcript.judge, Transcript.differs_from_reference, Transcript.human, Transcript.tags, Transcript.comment,
    Transcript.reviewed_at,
)
_ITEM_COLUMNS = (*queries.CANDIDATE_COLUMNS, Candidate.problem_id)


def _llm_reason(session: Session, transcript_id: int, version: str | None) -> str | None:
    """The one-line reason of the LLM judge whose verdict the transcript carries (`judge_version`)."""
    rows = session.execute(select(Judgement.model, Judgement.prompt_version, Judgement.reason).where(
        Judgement.transcript_id == transcript_id, Judgement.rule == LLM_RULE))
    return next((reason for model, prompt, reason in rows if judge_version(model, prompt) == version), None)


def load_review(session: Session, *, transcript_id: int) -> dict[str, Any] | None:
    """What the Review page shows of one transcript: its fields, and its item under `item`.

    The item of an unsolvable transcript is its candidate as `queries.candidates_query` gives it (with
    `question` / `ground_truth` the original's); of a solvable one, its problem (`candidate` None).
    """
    row = session.execute(select(*_TRANSCRIPT_COLUMNS).where(Transcript.id == transcript_id)).first()
    if row is None:
        return None
    view = row._asdict()
    view["reason"] = queue_reason(differs_from_reference=view["differs_from_reference"],
                                  judge_class=view["judge_class"], judge=view["judge"])
    view["judge_reason"] = _llm_reason(session, transcript_id, view["judge_version"]) if (
        view["judge_rule"] == LLM_RULE) else None
    if view["candidate_id"] is not None:
        item = session.execute(
            queries.candidates_query(columns=_ITEM_COLUMNS, order="id").where(Candidate.id == view["candidate_id"])
        ).one()._asdict()
        item["question"], item["ground_truth"] = queries.original_question_and_answer(item)
        view["item"] = item
    else:
        problem = session.execute(select(*queries.PROBLEM_COLUMNS).where(Problem.id == view["problem_id"])).one()
        view["item"] = {**problem._asdict(), "rewrite_type": None, "data_id": view["data_id"]}
    return view
