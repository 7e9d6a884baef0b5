"""UMWP (Sun et al., LREC-COLING 2024): answerable / unanswerable math word problems, in and out.

JSONL (or a JSON array) of `{"id": int, "question": str, "answer": [number] | null, "answerable": bool,
"category": null | 1-5, "relevant_ids": null | [int], "source": "GSM8K" | "SVAMP" | "MultiArith" | "ASDiv"}`.
An answerable record becomes a problem of data source `umwp` at position = its id; an unanswerable one a
candidate of the problem `relevant_ids[0]`, with the rewrite type named after its category. Export writes
each imported file back record for record: same order, same values and types.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator.formats import _io
from annotator.records import CandidateRecord, ImportPart, Location, ProblemRecord, SourceFileInfo, require, require_str

FORMAT = "umwp"
DATA_SOURCE = "umwp"
KEYS = ("id", "question", "answer", "answerable", "category", "relevant_ids", "source")
SOURCES = ("GSM8K", "SVAMP", "MultiArith", "ASDiv")
# Category -> rewrite type (one word, so that data ids stay `{source}_{index}_{type}_{k}`).
CATEGORIES = {
    1: ("remove", "key information missing"),
    2: ("ambiguous", "ambiguous key information"),
    3: ("unrealistic", "unrealistic conditions"),
    4: ("unrelated", "unrelated object"),
    5: ("noquestion", "question missing"),
}


def is_umwp_record(sample: dict[str, Any]) -> bool:
    return {"id", "question", "answerable"} <= set(sample)


def _int(value: Any, loc: Location, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise loc.error(f"expected a whole number, got {type(value).__name__} {value!r}"[:120], field)
    return value


def _validate(obj: dict[str, Any], loc: Location) -> None:
    for key in ("id", "question", "answerable", "source"):
        require(obj, key, loc)
    _int(obj["id"], loc, "id")
    require_str(obj["question"], loc, "question")
    if not isinstance(obj["answerable"], bool):
        raise loc.error(f"expected true or false, got {obj['answerable']!r}", "answerable")
    if obj["source"] not in SOURCES:
        raise loc.error(f"expected one of {', '.join(SOURCES)}, got {obj['source']!r}", "source")
    answer = obj.get("answer")
    if answer is not None:
        if not isinstance(answer, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in answer
        ):
            raise loc.error(f"expected a list of numbers or null, got {answer!r}"[:120], "answer")
    category = obj.get("category")
    if category is not None and (isinstance(category, bool) or category not in CATEGORIES):
        raise loc.error(f"expected null or a category 1-5, got {category!r}", "category")
    relevant = obj.get("relevant_ids")
    if relevant is not None and (
        not isinstance(relevant, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in relevant)
    ):
        raise loc.error(f"expected null or a list of record ids, got {relevant!r}"[:120], "relevant_ids")
    if obj["answerable"]:
        if answer is None:
            raise loc.error("an answerable record needs its answer (a list of numbers)", "answer")
    else:
        if not relevant:
            raise loc.error("an unanswerable record must name its answerable original in relevant_ids", "relevant_ids")
        if category is None:
            raise loc.error("an unanswerable record needs its category (1-5)", "category")


def _style(path: Path, text: str, data: Any) -> dict[str, Any]:
    if path.suffix.lower() == ".jsonl":
        return {"jsonl": True, "ensure_ascii": text.isascii()}
    for indent in (None, 2, 4):
        for ensure_ascii in (False, True):
            if json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) in (text, text.rstrip("\n")):
                return {
                    "jsonl": False,
                    "indent": indent,
                    "ensure_ascii": ensure_ascii,
                    "final_newline": text.endswith("\n"),
                }
    return {"jsonl": False, "indent": 2, "ensure_ascii": False, "final_newline": True}


def read_file(path: Path) -> ImportPart:
    text = _io.read_text(path)
    rows = list(_io.rows(path))
    data = [obj for _, obj in rows] if path.suffix.lower() != ".jsonl" else None
    info = SourceFileInfo(FORMAT, path.name, "umwp", _io.sha256_bytes(text.encode("utf-8")), _style(path, text, data))
    seen: dict[int, Location] = {}
    for loc, obj in rows:
        _validate(obj, loc)
        if obj["id"] in seen:
            raise loc.error(f"duplicate id {obj['id']}: it already appears at {seen[obj['id']].record}", "id")
        seen[obj["id"]] = loc

    def records() -> Iterator[ProblemRecord | CandidateRecord]:
        # Problems first: an unanswerable record may come before its original.
        for index, (loc, obj) in enumerate(rows):
            if obj["answerable"]:
                yield ProblemRecord(
                    data_source=DATA_SOURCE,
                    position=obj["id"],
                    source_id=obj["id"],
                    question=obj["question"],
                    ground_truth=obj.get("answer"),
                    extra={"umwp": _kept(obj, path.name, index)},
                    location=loc,
                )
        counters: dict[tuple[int, str], int] = defaultdict(int)
        for index, (loc, obj) in enumerate(rows):
            if obj["answerable"]:
                continue
            original = obj["relevant_ids"][0]
            rewrite_type, meaning = CATEGORIES[obj["category"]]
            counters[(original, rewrite_type)] += 1
            k = counters[(original, rewrite_type)]
            yield CandidateRecord(
                data_id=f"{DATA_SOURCE}_{original}_{rewrite_type}_{k}",
                data_source=DATA_SOURCE,
                problem_position=original,
                rewrite_type=rewrite_type,
                condition_index=k,
                rewritten_question=obj["question"],
                unsolvable_reason=f"UMWP category {obj['category']}: {meaning}.",
                provenance={"dataset": "UMWP", "file": path.name, "id": obj["id"]},
                extra={"umwp": _kept(obj, path.name, index)},
                position=index,
                location=loc,
            )

    return ImportPart(str(path), records(), info)


def _kept(obj: dict[str, Any], file: str, index: int) -> dict[str, Any]:
    """Everything of a record that the problem / candidate columns do not hold, and the key order."""
    kept = {key: value for key, value in obj.items() if key != "question"}
    return {"file": file, "index": index, "keys": list(obj), "fields": kept}


def record_from(extra: dict[str, Any], question: str) -> dict[str, Any]:
    info = extra["umwp"]
    fields = info["fields"]
    return {key: (question if key == "question" else fields[key]) for key in info["keys"]}


def dumps_file(records: list[dict[str, Any]], style: dict[str, Any]) -> str:
    ensure_ascii = bool(style.get("ensure_ascii", False))
    if style.get("jsonl", True):
        return "".join(json.dumps(record, ensure_ascii=ensure_ascii) + "\n" for record in records)
    text = json.dumps(records, indent=style.get("indent", 2), ensure_ascii=ensure_ascii)
    return text + "\n" if style.get("final_newline", True) else text


def write_files(session: Any, out: Path) -> dict[str, int]:
    """Every imported UMWP file under its own name, records in their original order."""
    from sqlalchemy import select

    from annotator.models import Candidate, Problem, SourceFile

    counts: dict[str, int] = {}
    files = session.execute(select(SourceFile).where(SourceFile.format == FORMAT).order_by(SourceFile.id)).scalars()
    for source_file in files:
        indexed: list[tuple[int, dict[str, Any]]] = []
        problems = session.execute(select(Problem.question, Problem.extra).where(Problem.data_source == DATA_SOURCE))
        for question, extra in problems:
            if (extra or {}).get("umwp", {}).get("file") == source_file.name:
                indexed.append((extra["umwp"]["index"], record_from(extra, question)))
        candidates = session.execute(
            select(Candidate.rewritten_question, Candidate.extra).where(Candidate.data_source == DATA_SOURCE)
        )
        for question, extra in candidates:
            if (extra or {}).get("umwp", {}).get("file") == source_file.name:
                indexed.append((extra["umwp"]["index"], record_from(extra, question)))
        indexed.sort(key=lambda item: item[0])
        target = out / source_file.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(dumps_file([record for _, record in indexed], source_file.options or {}).encode("utf-8"))
        counts[source_file.name] = len(indexed)
    return counts
