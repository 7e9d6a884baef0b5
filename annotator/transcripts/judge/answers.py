"""Reading the final answer out of a model's response: the last `\\boxed{...}`, the refusal phrases, TreeCut's
"Answer: ..." line.

The boxed answer is found as the ReliableMath reference code finds it (`last_boxed_only_string` in
`code/metrics/rewards/math_utils`, a public fork of the authors' repository): the last `\\boxed` or `\\fbox`,
its braces matched; an unclosed one (a truncated response) gives no answer.
"""

from __future__ import annotations

import re

_BOX_COMMANDS = ("\\boxed", "\\fbox")
# The reliable prompt offers `\boxed{it’s unsolvable}` and `\boxed{sorry, I don’t know}` (math_instruction.json).
UNSOLVABLE_PHRASE = "unsolvable"
UNKNOWN_PHRASE_EXACT = "don\u2019t know"  # the reference code's: curly apostrophe (U+2019) only
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (or `\\fbox{...}`, or `\\boxed 5`), braces matched; None if there
    is none or it is never closed."""
    start = max(text.rfind(command) for command in _BOX_COMMANDS)
    if start < 0:
        return None
    command = next(c for c in _BOX_COMMANDS if text.startswith(c, start))
    rest = text[start + len(command) :]
    stripped = rest.lstrip()
    if not stripped.startswith("{"):
        # `\boxed 5`: the token up to the next space or closing `$`.
        if rest[:1] != " ":
            return None
        token = re.match(r"[^\s$]+", stripped)
        return token.group(0) if token else None
    return _braced(stripped)


def _braced(text: str) -> str | None:
    """The content of the group `text` starts with, skipping escaped braces (`\\{`, `\\}`)."""
    depth = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[1:index]
        index += 1
    return None


def says_unsolvable(answer: str, *, exact: bool) -> bool:
    """Whether a final answer says the problem is unsolvable: case-sensitive in the reference code (`exact`)."""
    return UNSOLVABLE_PHRASE in (answer if exact else answer.lower())


def says_unknown(answer: str, *, exact: bool) -> bool:
    """Whether a final answer says "don't know": only with U+2019 in the reference code (`exact`), any case and
    straight or curly apostrophe otherwise."""
    if exact:
        return UNKNOWN_PHRASE_EXACT in answer
    return "don't know" in answer.lower().translate(_APOSTROPHES)


def treecut_answer(response: str) -> str | None:
    """What follows the last "answer" in the lower-cased response (TreeCut Appendix B.2), stripped of the
    colon; None if the response never says "answer"."""
    lowered = response.lower()
    at = lowered.rfind("answer")
    if at < 0:
        return None
    return lowered[at + len("answer") :].lstrip(" :*").strip()


def first_number(text: str) -> str | None:
    """The first number in `text` (thousands separators dropped), e.g. "12" from "$12 dollars."."""
    match = _NUMBER.search(text)
    return match.group(0).replace(",", "") if match else None
