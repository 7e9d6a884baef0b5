"""UMWP: every imported UMWP file under its own name, records in their original order, values and types.

Each record was kept in its problem's or candidate's extra (`annotator.formats.umwp`): its fields, its key
order and its index in the file; the question is the problem's or the candidate's own text.
"""

from __future__ import annotations

import json
from itertools import chain
from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator.formats.umwp import DATA_SOURCE, NAME
from annotator.store import iter_candidates, iter_problems, source_files


def record_from(extra: dict[str, Any], question: str) -> dict[str, Any]:
    info = extra["umwp"]
    fields = info["fields"]
    return {key: (question if key == "question" else fields[key]) for key in info["keys"]}


def dumps_file(records: list[dict[str, Any]], style: dict[str, Any]) -> str:
    """Records as a file in the style the UMWP and GSM-IC readers note in a file's options on import: JSONL
    or a JSON array, indent, escaping, final newline."""
    ensure_ascii = bool(style.get("ensure_ascii", False))
    if style.get("jsonl", True):
        return "".join(json.dumps(record, ensure_ascii=ensure_ascii) + "\n" for record in records)
    text = json.dumps(records, indent=style.get("indent", 2), ensure_ascii=ensure_ascii)
    return text + "\n" if style.get("final_newline", True) else text


def write_files(session: Session, out: Path) -> dict[str, int]:
    """Every imported UMWP file under its own name, records in their original order."""
    counts: dict[str, int] = {}
    for source_file in source_files(session, format=NAME):
        name = source_file["name"]
        texts = chain(
            ((p["question"], p["extra"]) for p in iter_problems(session, data_source=DATA_SOURCE)),
            ((c["rewritten_question"], c["extra"]) for c in iter_candidates(session, data_source=DATA_SOURCE)),
        )
        indexed = [
            (extra["umwp"]["index"], record_from(extra, question))
            for question, extra in texts
            if (extra or {}).get("umwp", {}).get("file") == name
        ]
        indexed.sort(key=lambda item: item[0])
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(dumps_file([record for _, record in indexed], source_file["options"] or {}).encode("utf-8"))
        counts[name] = len(indexed)
    return counts
