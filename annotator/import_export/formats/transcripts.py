"""Transcripts made elsewhere: JSONL (or a JSON array) of `{"data_id", "model", "prompt", "response"}` with
optional `"reasoning"`, `"sample"` (default 0) and `"params"` (an object: temperature, max_tokens, ...).

`data_id` names the item answered: a candidate's `data_id`, or `{data_source}_{position}` for a solvable
problem (`aime_0` is the first record of `solve/aime.json`). The importer checks that the item exists and
that no (data_id, model, prompt, sample) comes twice, in the file or in the database.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from annotator.import_export.formats import _io
from annotator.import_export.records import (
    ImportPart,
    Location,
    ReadOptions,
    TranscriptRecord,
    check_json_value,
    check_name,
    optional_int,
    optional_str,
    require,
    require_str,
)

NAME = "transcripts"
REQUIRED = ("data_id", "model", "prompt", "response")
# The columns' sizes (models.Transcript): PostgreSQL would refuse longer values.
MAX_CHARS = {"data_id": 300, "model": 300, "prompt": 100}


def sniff(path: Path) -> bool:
    sample = _io.first_row(path)
    return sample is not None and set(REQUIRED) <= set(sample)


def transcript_record(
    obj: dict[str, Any], loc: Location, *, source: str = NAME, origin: Mapping[str, str] | None = None
) -> TranscriptRecord:
    """A checked transcript from a record's fields; InputError naming the record and field otherwise (`origin`:
    the file's own field a value came from, where a format's differs from ours, e.g. the model of a Batch API
    line is its `response.body.model`)."""
    origin = origin or {}
    for key in REQUIRED:
        require(obj, key, loc)
    for key, limit in MAX_CHARS.items():
        if isinstance(obj[key], str) and len(obj[key].strip()) > limit:
            raise loc.error(f"is {len(obj[key].strip())} characters long; the limit is {limit}", origin.get(key, key))
    for key in MAX_CHARS:  # data_id, model and prompt are names (`annotator.database.names`; its first step inline)
        if isinstance(obj[key], str) and not obj[key].isprintable():
            check_name(obj[key].strip(), loc, origin.get(key, key))
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        raise loc.error(f"expected an object (e.g. {{\"temperature\": 0}}), got {type(params).__name__}", "params")
    return TranscriptRecord(
        data_id=require_str(obj["data_id"], loc, "data_id").strip(),
        model=require_str(obj["model"], loc, "model").strip(),
        prompt=require_str(obj["prompt"], loc, "prompt").strip(),
        # An empty response is a real outcome (the model said nothing): judged unmatched.
        response=require_str(obj["response"], loc, "response", allow_empty=True),
        sample=optional_int(obj.get("sample", 0), loc, "sample") or 0,
        reasoning=optional_str(obj.get("reasoning"), loc, "reasoning"),
        params=check_json_value(params, loc, "params"),
        finish_reason=optional_str(obj.get("finish_reason"), loc, "finish_reason"),
        prompt_tokens=optional_int(obj.get("prompt_tokens"), loc, "prompt_tokens"),
        completion_tokens=optional_int(obj.get("completion_tokens"), loc, "completion_tokens"),
        source=source,
        location=loc,
    )


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    def records() -> Iterator[TranscriptRecord]:
        for loc, obj in _io.rows(path):
            yield transcript_record(obj, loc)

    return [ImportPart(str(path), records())]
