"""GSM-IC: every imported GSM-IC file under its own name, record for record; the vetted solvable-by-design
candidates that came from no imported file (those `distract` made) in `GSM-IC_distract.json`; and the one
GSM-IC record builder, which `annotator.construction.gsm_ic` uses for the variants it writes.

A distractor is vetted (`queue.vetted`) when it resolves to human_check = 1 ("answer unchanged") over
`labels_per_candidate` labels or a reviewer decided so: these are the
solvable problems with irrelevant context, and they go here, never into ReliableMath's unsolvable files.

GSM-IC's answers are strings (some with thousands separators): an imported record's answer is written back
with the type it had; for a variant of another source's problem (`distract`), an answer of another JSON type
(its ground truth) is written as its JSON text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from annotator._util.files import write_file
from annotator.database.models import Candidate
from annotator.database.queries import iter_candidates, original_question_and_answer, source_files
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN
from annotator.import_export.exports.umwp import dumps_file
from annotator.import_export.formats.gsm_ic import NAME
from annotator.labelling.queue import label_target, vetted

# A GSM-IC file that was not imported (e.g. `distract --out`): a JSON array, indent 2, non-ASCII kept, a final
# newline.
STYLE = {"jsonl": False, "indent": 2, "ensure_ascii": False, "final_newline": True}
GENERATED_FILE = "GSM-IC_distract.json"


def gsm_ic_record(*, original_question: str, new_question: str, answer: Any, info: dict[str, Any]) -> dict[str, Any]:
    """One GSM-IC record. `info` is the candidate's `extra["gsm_ic"]`: its other `fields` (role, number,
    labels, template...) and, for an imported record, its key order (`keys`)."""
    imported = "keys" in info  # only an imported record knows its key order
    values = {
        "original_question": original_question,
        "new_question": new_question,
        "answer": answer if isinstance(answer, str) or imported else json.dumps(answer),
        **info["fields"],
    }
    return {key: values[key] for key in info.get("keys") or values}


def record_from(candidate: dict[str, Any]) -> dict[str, Any]:
    """The GSM-IC record of a candidate row (`queries.iter_candidates`)."""
    question, answer = original_question_and_answer(candidate)
    return gsm_ic_record(
        original_question=question,
        new_question=candidate["rewritten_question"],
        answer=answer,
        info=(candidate.get("extra") or {}).get("gsm_ic") or {"fields": {}},
    )


def dumps(records: list[dict[str, Any]], style: dict[str, Any] | None = None) -> str:
    """Records as a GSM-IC file: in `style` (an imported file's, noted on import) or GSM-IC's own."""
    return dumps_file(records, STYLE if style is None else style)


def write_files(session: Session, out: Path) -> dict[str, int]:
    """Every imported GSM-IC file under its own name, records in their original order, and the vetted
    solvable-by-design candidates of no imported file in `GENERATED_FILE` (when there are any)."""
    counts: dict[str, int] = {}
    for source_file in source_files(session, format=NAME):
        name, options = source_file["name"], source_file["options"] or {}
        records = [
            record_from(c)
            for c in iter_candidates(session, data_source=options.get("data_source"))
            if ((c.get("extra") or {}).get("gsm_ic") or {}).get("file") == name
        ]
        write_file(out / name, dumps(records, options))
        counts[name] = len(records)
    generated = [
        record_from(c)
        for c in iter_candidates(session, where=vetted(label_target(session)), rewrite_types=SOLVABLE_BY_DESIGN)
        if "file" not in ((c.get("extra") or {}).get("gsm_ic") or {})
    ]
    if generated:
        write_file(out / GENERATED_FILE, dumps(generated))
        counts[GENERATED_FILE] = len(generated)
    return counts


def nothing_to_write(session: Session) -> str | None:
    """Why the export would write no file, or None: it writes every imported GSM-IC file and the vetted
    distractors."""
    distractors = select(Candidate.id).where(
        vetted(label_target(session)), Candidate.rewrite_type.in_([str(t) for t in SOLVABLE_BY_DESIGN])
    )
    if source_files(session, format=NAME) or session.scalar(distractors.limit(1)) is not None:
        return None
    return "no GSM-IC files were imported and no distractor is vetted yet"
