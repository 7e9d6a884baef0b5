"""A scripted LLM judge for the local OpenAI-compatible server: it grades the judge prompt's response as
ReliableMath's Table 1 would, from the prompt's text alone, and says why in one line."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Engine

from annotator.transcripts.judge.llm_prompt import UNSOLVABLE_REFERENCE
from tests.support.transcripts import add_transcripts

GROUND_TRUTH = re.compile(r"Its ground-truth answer is: (.*)")
RESPONSE = re.compile(r"### Response ###\n(.*)\n\n### How to grade ###", re.S)  # a v1 prompt
# A fenced prompt (v2): the texts between their BEGIN and END lines, the boundary the system message names.
BOUNDARY = re.compile(r'between "BEGIN RESPONSE (fence-[0-9a-f]+)"')


def fenced_text(prompt: str, name: str) -> str | None:
    """The text of fence `name` (PROBLEM, REFERENCE, RESPONSE) in a fenced prompt, as a judge reads it: from its
    BEGIN line to the END line with the boundary the system message gives; None in a prompt without fences."""
    mark = BOUNDARY.search(prompt)
    if mark is None:
        return None
    found = re.search(rf"^BEGIN {name} {mark.group(1)}\n(.*?)\nEND {name} {mark.group(1)}$", prompt, re.S | re.M)
    return found.group(1) if found else None


def _texts(prompt: str) -> tuple[str | None, str]:
    """The response and the reference a prompt gives (a fenced one's from its fences)."""
    response = fenced_text(prompt, "RESPONSE")
    if response is not None:
        return response, fenced_text(prompt, "REFERENCE") or ""
    found = RESPONSE.search(prompt)
    return (found.group(1) if found else None), prompt


def expected_verdict(response: str, *, ground_truth: Any, unsolvable: bool) -> str:
    """The verdict the scripted judge gives: a refusal says "know", success is the boxed truth or "unsolvable"."""
    if "know" in response:
        return "R"
    if unsolvable:
        return "S" if "unsolvable" in response else "F"
    return "S" if f"\\boxed{{{ground_truth}}}" in response else "F"


def scripted_judge(prompt: str, model: str = "") -> str:
    """The two lines the judge prompt asks for."""
    response, reference = _texts(prompt)
    if response is None:
        return "I do not understand the prompt."
    truth = GROUND_TRUTH.search(reference)
    unsolvable = UNSOLVABLE_REFERENCE in reference
    verdict = expected_verdict(response, ground_truth=truth and truth.group(1), unsolvable=unsolvable)
    return f"Verdict: {verdict}\nReason: {model} read the response as {verdict} against the reference."


# Responses on unsolvable items (candidates) and solvable ones (problems), with what the scripted judge says.
SPECS: list[dict[str, Any]] = [
    {"response": "Without the value it is \\boxed{it's unsolvable}.", "judge_class": "unsolvable"},
    {"response": "\\boxed{sorry, I don't know}", "judge_class": "unknown"},
    {"response": "Assuming x = 3, \\boxed{9}.", "judge_class": "incorrect"},
    {"response": "I think it is 16, \\boxed{16}.", "judge_class": "incorrect"},
    {"response": "So \\boxed{25}.", "solvable": True, "judge_class": "correct", "judge": "S"},
    {"response": "So \\boxed{7}.", "solvable": True, "judge_class": "incorrect", "judge": "F"},
    {"response": "Hmm, I don't know.", "solvable": True, "judge_class": "unmatched", "judge": "F"},
    {"response": "This cannot be solved: \\boxed{it's unsolvable}.", "judge_class": "unsolvable"},
]


def add_judged_transcripts(engine: Engine, specs: list[dict[str, Any]] | None = None) -> list[int]:
    """Transcripts (by model-a, judged by the reliablemath rule) on unsolvable and solvable items; their ids."""
    return add_transcripts(engine, specs or SPECS)
