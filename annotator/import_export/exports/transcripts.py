"""Transcripts: `transcripts.jsonl`, one line per model response, with the judge's and the human's verdicts.

Keys, in order: data_id, model, prompt, sample, response, extracted_answer, judge_rule, judge_class, judge,
human, verdict (the effective one: the human's where given, else the judge's), tags, comment.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlmodel import Session

from annotator.database.models import Transcript
from annotator.import_export.exports.rows import write_table
from annotator.transcripts.collect.storing import iter_transcripts

KEYS = ("data_id", "model", "prompt", "sample", "response", "extracted_answer", "judge_rule", "judge_class",
        "judge", "human", "verdict", "tags", "comment")
FILE = "transcripts.jsonl"


def write_transcripts(session: Session, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    # Streamed: responses are long and there may be 100,000s of them.
    rows = ({key: row[key] for key in KEYS} for row in iter_transcripts(session))
    return {FILE: write_table(out / FILE, rows, file_format="jsonl")}


def nothing_to_write(session: Session) -> str | None:
    """Why the transcripts export would hold no line, or None."""
    return None if session.scalar(select(Transcript.id).limit(1)) is not None else "the database holds no transcripts"
