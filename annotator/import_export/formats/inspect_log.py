"""Inspect AI eval logs (`.eval`, or a `.json` log), read with inspect_ai's own log API (`read_eval_log`).

Each sample is one transcript: the item's data_id is the sample's `metadata.data_id`, else its `id`; the model
is the log's; the prompt is `metadata.prompt` of the sample, else of the task, else the task's name; the
sample number is the epoch counted from 0; the response is the output's completion, the reasoning the
output message's reasoning blocks; params the log's generate config (a log our `inspect` export wrote keeps
each sample's params and finish_reason in its metadata: those are taken).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator.import_export.formats.transcripts import transcript_record
from annotator.import_export.records import ImportPart, InputError, Location, ReadOptions, TranscriptRecord

NAME = "inspect_log"
_HEADER_BYTES = 4096


def sniff(path: Path) -> bool:
    """An `.eval` file, or a `.json` file that opens as an Inspect log (an object with "eval" near its top)."""
    if not path.is_file():
        return False
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return True
    if suffix != ".json":
        return False
    with path.open("rb") as handle:
        head = handle.read(_HEADER_BYTES).removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"{") and b'"eval"' in head and b'"version"' in head


def _reasoning(output: Any) -> str | None:
    message = output.message if output.choices else None
    if message is None or isinstance(message.content, str):
        return None
    parts = [part.reasoning for part in message.content if getattr(part, "type", None) == "reasoning"]
    return "\n\n".join(parts) or None


def _fields(log: Any, sample: Any) -> dict[str, Any]:
    metadata = sample.metadata or {}
    task_metadata = log.eval.metadata or {}
    output = sample.output
    usage = output.usage
    config = log.eval.model_generate_config
    params = config.model_dump(exclude_none=True) if config is not None else None
    stop_reason = output.choices[0].stop_reason if output.choices else None
    return {
        "data_id": metadata.get("data_id", str(sample.id)),
        "model": log.eval.model,
        "prompt": metadata.get("prompt") or task_metadata.get("prompt") or log.eval.task,
        "response": output.completion,
        "sample": max(sample.epoch - 1, 0),
        "reasoning": _reasoning(output),
        # A log written by our `inspect` export keeps each transcript's own params and finish reason here.
        "params": metadata["params"] if isinstance(metadata.get("params"), dict) else params or None,
        "finish_reason": metadata["finish_reason"] if "finish_reason" in metadata else stop_reason,
        "prompt_tokens": usage.input_tokens if usage else None,
        "completion_tokens": usage.output_tokens if usage else None,
    }


def _origin(sample: Any) -> dict[str, str]:
    """The log's fields the names come from, for the errors."""
    metadata = sample.metadata or {}
    return {"data_id": "metadata.data_id" if "data_id" in metadata else "id", "model": "eval.model",
            "prompt": "metadata.prompt" if metadata.get("prompt") else "eval.metadata.prompt or eval.task"}


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    from inspect_ai.log import read_eval_log  # heavy: loaded only to read a log

    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises several types for a broken or foreign file
        raise InputError(str(path), f"is not a readable Inspect AI log: {exc}".splitlines()[0][:300]) from None
    if not log.samples:
        raise InputError(str(path), "the log holds no samples")

    def records() -> Iterator[TranscriptRecord]:
        for sample in log.samples:
            loc = Location(str(path), f"sample {sample.id!r} epoch {sample.epoch}")
            yield transcript_record(_fields(log, sample), loc, source=NAME, origin=_origin(sample))

    return [ImportPart(str(path), records())]
