"""UMWP: every imported UMWP file under its own name, records in their original order, values and types.

Each record was kept in its problem's or candidate's extra (`annotator.import_export.formats.umwp`): its fields, its key
order and its index in the file; the question is the problem's or the candidate's own text.
"""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import chain
from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator._util.files import write_file
from annotator.database.queries import iter_candidates, iter_problems, source_files
from annotator.import_export.formats.umwp import DATA_SOURCE, NAME


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
    # One pass over the UMWP problems and candidates, sorted into their files (not one pass per file).
    by_file: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    texts = chain(
        ((p["question"], p["extra"]) for p in iter_problems(session, data_source=DATA_SOURCE)),
        ((c["rewritten_question"], c["extra"]) for c in iter_candidates(session, data_source=DATA_SOURCE)),
    )
    for question, extra in texts:
        info = (extra or {}).get("umwp")
        if info is not None:
            by_file[info.get("file")].append((info["index"], record_from(extra, question)))
    counts: dict[str, int] = {}
    for source_file in source_files(session, format=NAME):
        name = source_file["name"]
        indexed = sorted(by_file.get(name, []), key=lambda item: item[0])
        write_file(out / name, dumps_file([record for _, record in indexed], source_file["options"] or {}))
        counts[name] = len(indexed)
    return counts


def nothing_to_write(session: Session) -> str | None:
    """Why the export would write no file, or None."""
    return None if source_files(session, format=NAME) else "no UMWP files were imported"
