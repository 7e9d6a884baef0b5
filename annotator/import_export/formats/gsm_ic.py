"""GSM-IC (Shi et al., 2023): GSM8K problems with an irrelevant sentence added.

A JSON array (`GSM-IC_2step.json`, `GSM-IC_mstep.json`) or JSONL of `{"original_question", "new_question",
"answer", "n_steps", "role", "number", "sentence_template", "role_label", "number_label", "sentence_label"}`;
answers are strings (some with thousands separators), numbers are strings too ("n/a" when none); another
JSON value in a data field (an answer, a number) is kept with its type and named in the import summary.
Each distinct `original_question` becomes a problem (data source `gsm_ic-2step` etc., from the file name),
each record a `distractor` candidate of it; the labels and the template are kept in the candidate's extra.
`annotator.import_export.exports.gsm_ic` writes each imported file back record for record.
"""

from __future__ import annotations

import json
import re
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

NAME = "gsm_ic"
REQUIRED = ("original_question", "new_question", "answer")
TEXT_FIELDS = ("role", "number", "sentence_template", "role_label", "number_label", "sentence_label")


def is_gsm_ic_record(sample: dict[str, Any]) -> bool:
    return {"original_question", "new_question"} <= set(sample)


def sniff(path: Path) -> bool:
    sample = _io.first_row(path)
    return sample is not None and is_gsm_ic_record(sample)


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    return [read_file(path)]


def data_source_for(path: Path) -> str:
    """`GSM-IC_2step.json` -> `gsm_ic-2step`; other names -> `gsm_ic-<name>`."""
    stem = re.sub(r"^gsm-ic[_-]?", "", path.stem, flags=re.IGNORECASE)
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", stem).strip("-").lower()
    return f"gsm_ic-{slug}" if slug else "gsm_ic"


def filled_sentence(template: Any, role: Any, number: Any) -> str | None:
    """The distracting sentence, from the template and its role and number (any of them may be a JSON value
    other than text in a real file: written as its JSON text then)."""
    if not template:
        return None

    def text(value: Any, placeholder: str) -> str:
        return value if isinstance(value, str) else placeholder if value is None else json.dumps(value)

    return text(template, "").replace("{role}", text(role, "{role}")).replace("{number}", text(number, "{number}"))


# Values GSM-IC's own files do not have, accepted (they are data) and kept as given.
ODD_ANSWER = Oddity("answer that is not text, kept as given", "answers that are not text, kept as given")
ODD_FIELD = Oddity(
    "record with n_steps not a whole number or a role, number, template or label not text, kept as given",
    "records with n_steps not a whole number or a role, number, template or label not text, kept as given",
)


def _validate(obj: dict[str, Any], loc: Location, oddities: Counter[Oddity]) -> None:
    """The two questions are what the format means; the answer and the other fields are data: any JSON
    value is kept, and counted in `oddities` when GSM-IC's own files would not have it."""
    for key in ("original_question", "new_question"):
        require_str(require(obj, key, loc), loc, key)
    check_json_value(require(obj, "answer", loc), loc, "answer")
    if not isinstance(obj["answer"], str):
        oddities[ODD_ANSWER] += 1
    for key in ("n_steps", *TEXT_FIELDS):
        check_json_value(obj.get(key), loc, key)
    steps = obj.get("n_steps", 0)
    if isinstance(steps, bool) or not isinstance(steps, int) or any(
        not isinstance(obj[key], str) for key in TEXT_FIELDS if key in obj
    ):
        oddities[ODD_FIELD] += 1


def read_file(path: Path) -> ImportPart:
    text = _io.read_text(path)
    rows = list(_io.rows(path))
    data = [obj for _, obj in rows] if path.suffix.lower() != ".jsonl" else None
    style = _io.json_style(path, text, data)
    info = SourceFileInfo(NAME, path.name, "gsm_ic", sha256_bytes(text.encode("utf-8")), style)
    data_source = data_source_for(path)
    positions: dict[str, tuple[int, Location, Any]] = {}
    oddities: Counter[Oddity] = Counter()
    for loc, obj in rows:
        _validate(obj, loc, oddities)
        known = positions.get(obj["original_question"])
        if known is None:
            positions[obj["original_question"]] = (len(positions), loc, obj["answer"])
        elif json.dumps(known[2]) != json.dumps(obj["answer"]):
            raise loc.error(
                f"{obj['answer']!r} differs from {known[2]!r}, given for the same original_question at "
                f"{known[1].record}",
                "answer",
            )
    info.options["data_source"] = data_source

    def records() -> Iterator[ProblemRecord | CandidateRecord]:
        emitted: set[str] = set()
        counters: dict[int, int] = defaultdict(int)
        for index, (loc, obj) in enumerate(rows):
            original = obj["original_question"]
            position = positions[original][0]
            if original not in emitted:
                emitted.add(original)
                yield ProblemRecord(
                    data_source=data_source,
                    position=position,
                    question=original,
                    ground_truth=obj["answer"],
                    extra={"gsm_ic": {"n_steps": obj.get("n_steps")}} if "n_steps" in obj else None,
                    location=loc,
                )
            counters[position] += 1
            k = counters[position]
            kept = {key: value for key, value in obj.items() if key not in REQUIRED}
            sentence = filled_sentence(obj.get("sentence_template"), obj.get("role"), obj.get("number"))
            yield CandidateRecord(
                data_id=str(DataId(data_source, position, RewriteType.distractor, k)),
                data_source=data_source,
                problem_position=position,
                rewrite_type=RewriteType.distractor,
                condition_index=k,
                rewritten_question=obj["new_question"],
                rewritten_condition=sentence,
                question=original,
                ground_truth=obj["answer"],
                provenance={"dataset": "GSM-IC", "file": path.name},
                extra={"gsm_ic": {"file": path.name, "keys": list(obj), "fields": kept}},
                position=index,
                location=loc,
            )

    return ImportPart(str(path), records(), info, oddities)
