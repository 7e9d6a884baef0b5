"""UMWP (Sun et al., LREC-COLING 2024): answerable / unanswerable math word problems.

JSONL (or a JSON array) of `{"id": int, "question": str, "answer": [number] | null, "answerable": bool,
"category": null | 1-5, "relevant_ids": null | [int], "source": "GSM8K" | "SVAMP" | "MultiArith" | "ASDiv"}`.
An answerable record becomes a problem of data source `umwp` at position = its id; an unanswerable one a
candidate of the problem `relevant_ids[0]`, with the rewrite type named after its category; all its
`relevant_ids` (a variant may be made from several answerable records) stay in its provenance and its
unsolvable_reason names the others, besides the record's own copy in extra. Each record
keeps what the columns do not hold in its extra, so that `annotator.import_export.exports.umwp` writes each imported
file back record for record: same order, same values and types.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator._util.files import sha256_bytes
from annotator.database.vocabulary import DataId, RewriteType
from annotator.import_export.formats import _io
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    Location,
    Oddity,
    ProblemRecord,
    ReadOptions,
    SourceFileInfo,
    check_json_value,
    require,
    require_str,
)

NAME = "umwp"
DATA_SOURCE = "umwp"
KEYS = ("id", "question", "answer", "answerable", "category", "relevant_ids", "source")
SOURCES = ("GSM8K", "SVAMP", "MultiArith", "ASDiv")
# Category -> rewrite type (one word, so that data ids stay `{source}_{index}_{type}_{k}`).
CATEGORIES = {
    1: (RewriteType.remove, "key information missing"),
    2: (RewriteType.ambiguous, "ambiguous key information"),
    3: (RewriteType.unrealistic, "unrealistic conditions"),
    4: (RewriteType.unrelated, "unrelated object"),
    5: (RewriteType.noquestion, "question missing"),
}


def is_umwp_record(sample: dict[str, Any]) -> bool:
    return {"id", "question", "answerable"} <= set(sample)


def sniff(path: Path) -> bool:
    sample = _io.first_row(path)
    return sample is not None and is_umwp_record(sample)


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    return [read_file(path)]


def _int(value: Any, loc: Location, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise loc.error(f"expected a whole number, got {type(value).__name__} {value!r}"[:120], field)
    return value


# What real UMWP files hold that the format's description does not, accepted and kept as given.
ANSWER_ON_UNANSWERABLE = Oddity(
    "unanswerable record with a non-null answer, kept as given",
    "unanswerable records with a non-null answer, kept as given",
)
ODD_ANSWER = Oddity(
    "answerable record whose answer is not a list of numbers, kept as given",
    "answerable records whose answer is not a list of numbers, kept as given",
)
ODD_SOURCE = Oddity(
    f"record whose source is missing or not one of {', '.join(SOURCES)}, kept as given",
    f"records whose source is missing or not one of {', '.join(SOURCES)}, kept as given",
)
ODD_CATEGORY = Oddity(
    "answerable record with a category or relevant_ids, kept as given",
    "answerable records with a category or relevant_ids, kept as given",
)


def _is_numbers(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)


def _validate(obj: dict[str, Any], loc: Location, oddities: Counter[Oddity]) -> None:
    """Errors for what the format's meaning needs (an id, a question, whether it is answerable, and for an
    unanswerable record its category and original); every other value is data, kept as given and counted
    in `oddities` when it is not what the format describes."""
    for key in ("id", "question", "answerable"):
        require(obj, key, loc)
    _int(obj["id"], loc, "id")
    require_str(obj["question"], loc, "question")
    if not isinstance(obj["answerable"], bool):
        raise loc.error(f"expected true or false, got {obj['answerable']!r}", "answerable")
    for key in KEYS:
        check_json_value(obj.get(key), loc, key)
    if obj.get("source") not in SOURCES:
        oddities[ODD_SOURCE] += 1
    answer, category, relevant = obj.get("answer"), obj.get("category"), obj.get("relevant_ids")
    if obj["answerable"]:
        if not _is_numbers(answer):
            oddities[ODD_ANSWER] += 1
        if category is not None or relevant is not None:
            oddities[ODD_CATEGORY] += 1
        return
    if answer is not None:
        oddities[ANSWER_ON_UNANSWERABLE] += 1
    _validate_reference(relevant, category, loc)


def _validate_reference(relevant: Any, category: Any, loc: Location) -> None:
    """What an unanswerable record needs: its answerable original and its category."""
    if not relevant:
        raise loc.error("an unanswerable record must name its answerable original in relevant_ids", "relevant_ids")
    if not isinstance(relevant, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in relevant):
        raise loc.error(f"expected a list of record ids, got {relevant!r}"[:120], "relevant_ids")
    if category is None:
        raise loc.error("an unanswerable record needs its category (1-5)", "category")
    if isinstance(category, bool) or category not in CATEGORIES:
        raise loc.error(f"expected a category 1-5, got {category!r}", "category")


def read_file(path: Path) -> ImportPart:
    text = _io.read_text(path)
    rows = list(_io.rows(path))
    data = [obj for _, obj in rows] if path.suffix.lower() != ".jsonl" else None
    info = SourceFileInfo(NAME, path.name, "umwp", sha256_bytes(text.encode("utf-8")), _io.json_style(path, text, data))
    seen: dict[int, Location] = {}
    oddities: Counter[Oddity] = Counter()
    for loc, obj in rows:
        _validate(obj, loc, oddities)
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
            others = obj["relevant_ids"][1:]
            also = f" Also made from record{'s' * (len(others) > 1)} {', '.join(map(str, others))}." if others else ""
            counters[(original, rewrite_type)] += 1
            k = counters[(original, rewrite_type)]
            yield CandidateRecord(
                data_id=str(DataId(DATA_SOURCE, original, rewrite_type, k)),
                data_source=DATA_SOURCE,
                problem_position=original,
                rewrite_type=rewrite_type,
                condition_index=k,
                rewritten_question=obj["question"],
                unsolvable_reason=f"UMWP category {obj['category']}: {meaning}.{also}",
                provenance={"dataset": "UMWP", "file": path.name, "id": obj["id"], "relevant_ids": obj["relevant_ids"]},
                extra={"umwp": _kept(obj, path.name, index)},
                position=index,
                location=loc,
            )

    return ImportPart(str(path), records(), info, oddities)


def _kept(obj: dict[str, Any], file: str, index: int) -> dict[str, Any]:
    """Everything of a record that the problem / candidate columns do not hold, and the key order."""
    kept = {key: value for key, value in obj.items() if key != "question"}
    return {"file": file, "index": index, "keys": list(obj), "fields": kept}
