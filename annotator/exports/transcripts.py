"""Transcripts: `transcripts.jsonl`, one line per model response, with the judge's and the human's verdicts.

Keys, in order: data_id, model, prompt, sample, response, extracted_answer, judge_rule, judge_class, judge,
human, verdict (the effective one: the human's where given, else the judge's), tags, comment.
"""

from __future__ import annotations

import json
from pathlib import Path

from sqlmodel import Session

from annotator.transcripts.storing import iter_transcripts

KEYS = ("data_id", "model", "prompt", "sample", "response", "extracted_answer", "judge_rule", "judge_class",
        "judge", "human", "verdict", "tags", "comment")
FILE = "transcripts.jsonl"


def write_transcripts(session: Session, out: Path) -> dict[str, int]:
    count = 0
    out.mkdir(parents=True, exist_ok=True)
    # Streamed line by line: responses are long and there may be 100,000s of them.
    with (out / FILE).open("w", encoding="utf-8", newline="\n") as handle:
        for row in iter_transcripts(session):
            handle.write(json.dumps({key: row[key] for key in KEYS}, ensure_ascii=False) + "\n")
            count += 1
    return {FILE: count}
