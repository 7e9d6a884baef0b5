"""Make `batch_output.jsonl`: an OpenAI Batch API output file for /v1/chat/completions, built exactly as the
Batch API reference describes a line of the output and error files (`BatchRequestOutput`: id, custom_id,
response {status_code, request_id, body}, error), with each body a `ChatCompletion` of the openai SDK's own
types (openai==3.51.0, the project's pinned client) dumped as the API sends it. No request reached OpenAI: the
file is built, not downloaded (the API needs a key and the network).

    python tests/data/openai_batch/make_fixture.py

Lines: three answers (custom_id `data_id/prompt/sample`), one request the model refused with HTTP 400, and
one request that failed before reaching a model (`response: null`, an `error`), as the error file holds them.
"""

from __future__ import annotations

import json
from pathlib import Path

from openai.types.chat import ChatCompletion

HERE = Path(__file__).resolve().parent
MODEL = "gpt-4o-mini-2024-07-18"


def _completion(number: int, content: str, *, prompt_tokens: int, completion_tokens: int) -> dict:
    body = ChatCompletion.model_validate({
        "id": f"chatcmpl-fixture{number}",
        "object": "chat.completion",
        "created": 1764000000 + number,
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None,
                                             "annotations": []},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
        "service_tier": "default",
        "system_fingerprint": "fp_fixture",
    })
    return body.model_dump(mode="json")


def _line(number: int, custom_id: str, *, status: int | None, body: dict | None, error: dict | None) -> dict:
    response = None if status is None else {"status_code": status, "request_id": f"req_fixture{number}", "body": body}
    return {"id": f"batch_req_fixture{number}", "custom_id": custom_id, "response": response, "error": error}


def main() -> None:
    lines = [
        _line(1, "aime_0/reliable/0", status=200, error=None,
              body=_completion(1, "So the walk takes $\\boxed{204}$ minutes.", prompt_tokens=180,
                               completion_tokens=12)),
        _line(2, "aime_9_remove_1/reliable/0", status=200, error=None,
              body=_completion(2, "The lengths fix nothing about $D$: \\boxed{unsolvable}.", prompt_tokens=150,
                               completion_tokens=15)),
        _line(3, "aime_9_remove_1/reliable/1", status=200, error=None,
              body=_completion(3, "Taking $D$ where the tangents meet, $AP=\\frac{100}{13}$, so \\boxed{113}.",
                               prompt_tokens=150, completion_tokens=24)),
        _line(4, "aime_1/reliable/0", status=400, error=None,
              body={"error": {"message": "Invalid value for 'max_tokens'.", "type": "invalid_request_error",
                              "param": "max_tokens", "code": None}}),
        _line(5, "aime_2/reliable/0", status=None, body=None,
              error={"code": "batch_expired", "message": "This request could not be executed before the completion "
                                                         "window expired."}),
    ]
    with (HERE / "batch_output.jsonl").open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


if __name__ == "__main__":
    main()
