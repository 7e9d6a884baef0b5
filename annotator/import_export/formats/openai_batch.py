"""OpenAI Batch API output files: JSONL, one line per request, `{"id", "custom_id", "response": {"status_code",
"request_id", "body"}, "error"}` (the batch's `output_file_id`, or its `error_file_id`, downloaded as it is).

The `custom_id` (the caller's id for a request) says what was asked: `DATA_ID`, `DATA_ID/PROMPT` or
`DATA_ID/PROMPT/SAMPLE` (SAMPLE a whole number, default 0); `--prompt` names the prompt for every line instead,
and must be given when the custom_ids carry none. The body is the endpoint's answer: a `chat.completion`
(`/v1/chat/completions`: choices[i].message.content, with `reasoning_content` or `reasoning` where the server
gives one), a `text_completion` (`/v1/completions`: choices[i].text) or a `response` (`/v1/responses`: the
output messages' text, the reasoning items' summaries). With n > 1 choices, choice i is sample SAMPLE + i.
The model is the body's `model` (the snapshot that answered, e.g. `gpt-4o-mini-2024-07-18`) unless `--model`
names one.

A failed request (a non-null `error`, or a status other than 200) has no answer to import: it is skipped and
counted in the import summary, so that a batch with a few failures still comes in (the batch's error file can
be imported too: every line of it is such a failure). An answer with no text (`content: null`, e.g. a refusal
or a cut-off answer, or an empty one) is stored as an empty answer, judged as no answer, and counted in the
summary. A line of a batch's *input* file is refused with a hint.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator.import_export.formats import _io
from annotator.import_export.formats.transcripts import transcript_record
from annotator.import_export.records import (
    ImportPart,
    Location,
    Oddity,
    ReadOptions,
    TranscriptRecord,
    optional_int,
    require,
)

NAME = "openai_batch"
FAILED = Oddity(
    "failed request (an error, or an HTTP status other than 200) skipped: it has no answer",
    "failed requests (an error, or an HTTP status other than 200) skipped: they have no answer",
)
EMPTY = Oddity(
    "answer with no text (content null or empty) stored as an empty answer",
    "answers with no text (content null or empty) stored as empty answers",
)
# The file's own fields the names come from, for the errors (unless --model / --prompt give them).
_ORIGIN = {"data_id": "custom_id", "prompt": "custom_id", "model": "response.body.model"}


def sniff(path: Path) -> bool:
    sample = _io.first_row(path)
    if sample is None or "custom_id" not in sample:
        return False
    # An input file's line (method, url, body) is recognised too, to be refused with a hint.
    return "response" in sample or "error" in sample or {"url", "body"} <= set(sample)


def _object(value: Any, loc: Location, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise loc.error(f"expected an object, got {type(value).__name__}", field)
    return value


def _custom_id(obj: dict[str, Any], loc: Location, options: ReadOptions) -> tuple[str, str, int]:
    """(data_id, prompt, first sample) from the line's custom_id."""
    custom_id = require(obj, "custom_id", loc)
    if not isinstance(custom_id, str) or not custom_id.strip():
        raise loc.error(f"expected DATA_ID[/PROMPT[/SAMPLE]], got {custom_id!r}"[:200], "custom_id")
    parts = custom_id.strip().split("/")
    if len(parts) > 3 or not all(part.strip() for part in parts):
        raise loc.error(f"expected DATA_ID, DATA_ID/PROMPT or DATA_ID/PROMPT/SAMPLE, got {custom_id!r}"[:200],
                        "custom_id")
    if len(parts) == 3 and not parts[2].isdigit():
        raise loc.error(f"the sample (after the second '/') must be a whole number, got {parts[2]!r}"[:200],
                        "custom_id")
    prompt = options.prompt or (parts[1] if len(parts) > 1 else None)
    if prompt is None:
        raise loc.error(f"{custom_id!r} names no prompt: write custom_ids as DATA_ID/PROMPT[/SAMPLE], or give "
                        "--prompt"[:300], "custom_id")
    return parts[0], prompt, int(parts[2]) if len(parts) == 3 else 0


def _failed(obj: dict[str, Any], loc: Location) -> bool:
    response = obj.get("response")
    if obj.get("error") is not None or response is None:
        return True
    status = _object(response, loc, "response").get("status_code")
    if isinstance(status, bool) or not isinstance(status, int):
        raise loc.error(f"expected an HTTP status code, got {status!r}"[:200], "response.status_code")
    return status != 200


def _text(value: Any, loc: Location, field: str) -> str:
    if value is None:
        return ""  # e.g. a refusal or a cut-off answer with no content: judged as no answer
    if not isinstance(value, str):
        raise loc.error(f"expected text, got {type(value).__name__}", field)
    return value


def _chat_choice(choice: dict[str, Any], loc: Location, field: str) -> tuple[str, str | None]:
    message = _object(choice.get("message"), loc, f"{field}.message")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return (_text(message.get("content"), loc, f"{field}.message.content"),
            reasoning if isinstance(reasoning, str) else None)


def _completions(body: dict[str, Any], loc: Location) -> list[dict[str, Any]]:
    """The answers of a chat.completion or text_completion body: response, reasoning, finish_reason."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise loc.error("expected a non-empty list of choices", "response.body.choices")
    answers = []
    for index, choice in enumerate(choices):
        field = f"response.body.choices[{index}]"
        choice = _object(choice, loc, field)
        if body.get("object") == "text_completion":
            response, reasoning = _text(choice.get("text"), loc, f"{field}.text"), None
        else:
            response, reasoning = _chat_choice(choice, loc, field)
        answers.append({"response": response, "reasoning": reasoning, "finish_reason": choice.get("finish_reason")})
    if len(answers) == 1:  # the usage is the request's: it belongs to one answer only when there is one
        answers[0] |= _tokens(body, loc, prompt="prompt_tokens", completion="completion_tokens")
    return answers


def _tokens(body: dict[str, Any], loc: Location, *, prompt: str, completion: str) -> dict[str, int | None]:
    """The body's token counts, checked where they are (`response.body.usage.<key>`)."""
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return {ours: optional_int(usage.get(theirs), loc, f"response.body.usage.{theirs}")
            for ours, theirs in (("prompt_tokens", prompt), ("completion_tokens", completion))}


def _responses_answer(body: dict[str, Any], loc: Location) -> list[dict[str, Any]]:
    """The answer of a Responses API body (`object: "response"`)."""
    output = body.get("output")
    if not isinstance(output, list):
        raise loc.error("expected a list of output items", "response.body.output")
    texts, thoughts = [], []
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            texts += [part.get("text") for part in item.get("content") or [] if isinstance(part, dict)
                      and part.get("type") == "output_text" and isinstance(part.get("text"), str)]
        elif item.get("type") == "reasoning":
            thoughts += [part.get("text") for part in item.get("summary") or [] if isinstance(part, dict)
                         and isinstance(part.get("text"), str)]
    details = body.get("incomplete_details") if isinstance(body.get("incomplete_details"), dict) else {}
    return [{"response": "".join(texts), "reasoning": "\n\n".join(thoughts) or None,
             "finish_reason": details.get("reason") or body.get("status"),
             **_tokens(body, loc, prompt="input_tokens", completion="output_tokens")}]


def _answers(obj: dict[str, Any], loc: Location) -> tuple[Any, list[dict[str, Any]]]:
    """The body's model and its answers."""
    body = _object(obj["response"].get("body"), loc, "response.body")
    answers = _responses_answer(body, loc) if body.get("object") == "response" else _completions(body, loc)
    return body.get("model"), answers


def _records(obj: dict[str, Any], loc: Location, options: ReadOptions,
             oddities: Counter[Oddity]) -> Iterator[TranscriptRecord]:
    data_id, prompt, first = _custom_id(obj, loc, options)
    model, answers = _answers(obj, loc)
    if not options.model and not (isinstance(model, str) and model.strip()):
        raise loc.error("names no model; give --model", "response.body.model")
    for index, answer in enumerate(answers):
        fields = {"data_id": data_id, "model": options.model or model, "prompt": prompt, "sample": first + index}
        if isinstance(answer["finish_reason"], str):
            answer["finish_reason"] = answer["finish_reason"][:50]
        record = transcript_record(fields | answer, loc, source=NAME, origin=_ORIGIN)
        if not record.response:
            oddities[EMPTY] += 1
        yield record


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    oddities: Counter[Oddity] = Counter()

    def records() -> Iterator[TranscriptRecord]:
        for loc, obj in _io.rows(path):
            if "response" not in obj and "error" not in obj and "body" in obj:
                raise loc.error("is a request of a Batch API input file; import the batch's output file (its "
                                "output_file_id) instead", "response")
            if _failed(obj, loc):
                oddities[FAILED] += 1
                continue
            yield from _records(obj, loc, options, oddities)

    return [ImportPart(str(path), records(), oddities=oddities)]


