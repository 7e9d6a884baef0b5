"""A scripted LLM judge for the local OpenAI-compatible server: it grades the judge prompt's response as
ReliableMath's Table 1 would, from the prompt's text alone, and says why in one line."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Engine

from annotator.transcripts.judge_prompt import UNSOLVABLE_REFERENCE
from tests.support.transcripts import add_transcripts

GROUND_TRUTH = re.compile(r"Its ground-truth answer is: (.*)")
RESPONSE = re.compile(r"### Response ###\n(.*)\n\n### How to grade ###", re.S)


def expected_verdict(response: str, *, ground_truth: Any, unsolvable: bool) -> str:
    """The verdict the scripted judge gives: a refusal says "know", success is the boxed truth or "unsolvable"."""
    if "know" in response:
        return "R"
    if unsolvable:
        return "S" if "unsolvable" in response else "F"
    return "S" if f"\\boxed{{{ground_truth}}}" in response else "F"


def scripted_judge(prompt: str, model: str = "") -> str:
    """The two lines the judge prompt asks for."""
    found = RESPONSE.search(prompt)
    if found is None:
        return "I do not understand the prompt."
    truth = GROUND_TRUTH.search(prompt)
    unsolvable = UNSOLVABLE_REFERENCE in prompt
    verdict = expected_verdict(found.group(1), ground_truth=truth and truth.group(1), unsolvable=unsolvable)
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
