"""The LLM judge's prompt and the strict reading of its reply.

The prompt (`judge_prompts/<version>.txt`) gives the question the model was asked, the reference (the ground
truth, or, on an unsolvable item, that the problem is unsolvable: the original answer is not the answer there,
so it is not shown) and the response, and asks for exactly two lines, `Verdict: S|R|F` and `Reason: ...`.

A long response is shortened in the middle (its start and its end, where the final answer is, are kept) with a
marker saying how much was left out, so that a judge with a small context still sees the answer.

Two kinds of prompt file. One without `<boundary>` (v1) is one user message, the texts filled in where its
placeholders are. One with `<boundary>` (v2, the default) is the system message, and the texts go in the user
message, each fenced between `BEGIN NAME B` and `END NAME B` lines (`fenced`): a response holding headings,
grading rules or "Ground truth: 5" is then one text inside one fence, not a second prompt section. The boundary B
is derived from the texts themselves (`boundary`: a hash of them, checked not to occur in any of them), so a
text cannot forge its fence's end (it would have to hold the hash of itself), and the same transcript gives the
same request every time, so the call cache serves a resumed run (a random boundary per request would ask, and pay,
again). The texts stay as they are, unlike JSON-encoded fields, where every backslash of the LaTeX doubles and
line breaks become `\n` in what the judge reads.

The reply is read strictly (`parse_reply`): the two lines in that order and nothing else. A reply that is
anything else is no verdict (`UnreadableReply`); the run counts it and keeps the reply in its errors.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotator.database.vocabulary import Verdict
from annotator.runs.lifecycle import RunError

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_VERSION = "v2"
MAX_RESPONSE_CHARS = 6_000  # longer responses keep their first HEAD_CHARS and their last characters
HEAD_CHARS = 1_500
MAX_QUESTION_CHARS = 8_000
MAX_REASON_CHARS = 1_000
UNSOLVABLE_REFERENCE = (
    "The problem is UNSOLVABLE: a condition needed to answer it is missing or contradicts another, so it has no "
    "correct final answer."
)
_PLACEHOLDER = re.compile(r"<(question|reference|response)>")
BOUNDARY = "<boundary>"  # in a prompt file: the system message of a prompt whose texts are fenced
FENCES = (("PROBLEM", "question"), ("REFERENCE", "reference"), ("RESPONSE", "response"))
_VERDICT = re.compile(r"verdict:\s*([SRF])", re.IGNORECASE)
_REASON = re.compile(r"reason:\s*(\S.*)", re.IGNORECASE)


class UnreadableReply(ValueError):
    """The judge's reply is not exactly `Verdict: S|R|F` and `Reason: ...`."""


@dataclass(frozen=True)
class Reading:
    verdict: Verdict
    reason: str


def available_versions() -> list[str]:
    return sorted(path.stem for path in PROMPTS_DIR.glob("*.txt"))


@functools.lru_cache(maxsize=8)
def template(version: str = DEFAULT_VERSION) -> str:
    """The prompt of `version`; RunError naming the versions there are otherwise."""
    path = PROMPTS_DIR / f"{version}.txt"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", version) or not path.is_file():
        raise RunError(f"no judge prompt version {version!r}; have {', '.join(available_versions())}")
    return path.read_text(encoding="utf-8").rstrip("\n")


def shorten(text: str, limit: int, *, head: int | None = None) -> str:
    """`text`, or its start and end around a marker naming how many characters were left out."""
    if len(text) <= limit:
        return text
    head = limit // 2 if head is None else head
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted:,} characters of the response left out here ...]\n{text[-tail:]}"


def shown_response(response: str) -> str:
    """The response as the prompt shows it: shortened in the middle past `MAX_RESPONSE_CHARS`."""
    return shorten(response, MAX_RESPONSE_CHARS, head=HEAD_CHARS)


def reference(ground_truth: Any, *, unsolvable: bool) -> str:
    if unsolvable:
        return UNSOLVABLE_REFERENCE
    # A ground truth is any JSON value (a number, a list of answers...): shown as its JSON unless it is text.
    shown = ground_truth if isinstance(ground_truth, str) else json.dumps(ground_truth, ensure_ascii=False)
    return f"The problem is solvable. Its ground-truth answer is: {shown}"


def messages(
    *, question: str, ground_truth: Any, unsolvable: bool, response: str, version: str = DEFAULT_VERSION
) -> list[dict[str, str]]:
    """The chat messages that ask the judge about one response."""
    values = {
        "question": shorten(question, MAX_QUESTION_CHARS),
        "reference": reference(ground_truth, unsolvable=unsolvable),
        "response": shown_response(response),
    }
    prompt = template(version)
    if BOUNDARY in prompt:
        return fenced(prompt, values)
    # One pass over the template: a response that contains "<question>" is not filled in again.
    parts = _PLACEHOLDER.split(prompt)
    text = "".join(values[part] if index % 2 else part for index, part in enumerate(parts))
    return [{"role": "user", "content": text}]


def boundary(texts: Sequence[str]) -> str:
    """A fence boundary for `texts` that none of them holds: `fence-` and 24 hex digits of a hash of the texts
    (and, should a text hold that, of an attempt number with them, until none does)."""
    attempt = 0
    while True:
        payload = json.dumps([attempt, *texts], ensure_ascii=False).encode("utf-8", "surrogatepass")
        mark = f"fence-{hashlib.sha256(payload).hexdigest()[:24]}"
        if not any(mark in text for text in texts):
            return mark
        attempt += 1


def fenced(system: str, values: dict[str, str]) -> list[dict[str, str]]:
    """The system message (`system`, its `<boundary>` filled in) and a user message of the texts, each between
    its `BEGIN NAME B` and `END NAME B` lines."""
    mark = boundary([values[key] for _, key in FENCES])
    texts = "\n\n".join(f"BEGIN {name} {mark}\n{values[key]}\nEND {name} {mark}" for name, key in FENCES)
    return [{"role": "system", "content": system.replace(BOUNDARY, mark)}, {"role": "user", "content": texts}]


def parse_reply(reply: str) -> Reading:
    """The verdict and reason of a reply of exactly two lines, `Verdict: S|R|F` then `Reason: text`.

    Surrounding blank space is allowed, and either word in any case; anything else raises UnreadableReply.
    """
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if len(lines) != 2:
        raise UnreadableReply(f"expected 2 lines (Verdict, Reason), got {len(lines)}")
    verdict, reason = _VERDICT.fullmatch(lines[0]), _REASON.fullmatch(lines[1])
    if verdict is None:
        raise UnreadableReply(f"the first line is not 'Verdict: S', 'Verdict: R' or 'Verdict: F': {lines[0][:80]!r}")
    if reason is None:
        raise UnreadableReply(f"the second line is not 'Reason: ...': {lines[1][:80]!r}")
    return Reading(Verdict(verdict.group(1).upper()), reason.group(1).strip()[:MAX_REASON_CHARS])
