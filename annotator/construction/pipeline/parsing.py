"""Reading the `### Section ###: ...` answers of the construction prompts, tolerantly.

Models write the headers in many ways: `### Analysis ###:`, `### Analysis ###` (no colon), `###Analysis###`,
`### 1. Analysis ###`, `## Analysis`, `**Analysis**:`, and often answer a prompt that ends with its own
header without repeating it. Verdicts come as `True`, `true`, `True.`, `**False**`. A field that cannot be
found raises `ParseError` with a message saying what was missing; callers record it, they do not crash.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# `### name ###` anywhere; `## name` or `**name**` only at the start of a line, and those only count when the
# name is one we know (a bold "**Step 1**" inside an analysis must not cut the analysis short).
_HEADER = re.compile(
    r"(?P<closed>\#{2,}[ \t]*(?P<a>[^#\n]{1,100}?)[ \t]*\#{2,})"
    r"|^[ \t]*\#{2,}[ \t]*(?P<b>[^#\n:]{1,100}?)[ \t]*(?=:|$)"
    r"|^[ \t]*\*\*(?P<c>[^*\n]{1,100}?):?\*\*",
    re.MULTILINE,
)
_AFTER_HEADER = re.compile(r"[ \t]*[:：]?[ \t]*")
_NUMBERING = re.compile(
    r"^\s*(?:\(?\d+\s*[.):]|\(?[ivx]+\)|[-*•]|condition\s*\d*\s*[.:)]|premise\s*\d*\s*[.:)])\s*", re.I
)
_VERDICT = re.compile(r"\b(true|false)\b", re.I)
_PLACEHOLDER_ECHO = re.compile(r"^<[a-z_]+>$")


class ParseError(ValueError):
    """The answer does not contain the field asked for."""


@dataclass(frozen=True)
class Field:
    """A section of an answer, recognised by the words of its header."""

    name: str
    all_of: tuple[str, ...]
    none_of: tuple[str, ...] = ()

    def matches(self, words: frozenset[str] | set[str]) -> bool:
        return all(any(w.startswith(a) for w in words) for a in self.all_of) and not any(
            any(w.startswith(n) for w in words) for n in self.none_of
        )


CONDITIONS = Field("Extracted Condition", ("condition",), ("rewritten", "original"))
PREMISES = Field("Extracted Premise", ("premise",), ("rewritten", "original"))
ANALYSIS = Field("Analysis", ("analysis",), ("unsolvable",))
UNSOLVABLE_ANALYSIS = Field("Unsolvable Analysis", ("analysis",))
REWRITTEN_QUESTION = Field("Rewritten Mathematical Question", ("rewritten", "question"))
JUDGEMENT = Field("Your judgement (True or False)", ("judg",))
REWRITTEN_CONDITION = Field("Rewritten Condition", ("rewritten", "condition"))
UNSOLVABLE_REASON = Field("Unsolvable Reason", ("reason",))
KNOWN = (CONDITIONS, PREMISES, UNSOLVABLE_ANALYSIS, REWRITTEN_QUESTION, JUDGEMENT, REWRITTEN_CONDITION,
         UNSOLVABLE_REASON, Field("Original Mathematical Question", ("original", "question")),
         Field("Original Answer", ("original", "answer")), Field("Mathematical Question", ("mathematical", "question")))


@functools.lru_cache(maxsize=1024)
def _words(header: str) -> frozenset[str]:
    return frozenset(re.sub(r"[^a-z]+", " ", header.lower()).split())


@functools.lru_cache(maxsize=1024)
def _is_known(header: str) -> bool:
    words = _words(header)
    return any(field.matches(words) for field in KNOWN)


@functools.lru_cache(maxsize=1024)
def _header_matches(field: Field, header: str) -> bool:
    return bool(header) and field.matches(_words(header))


# A step reads several fields of one answer (analysis and question, analysis and verdict): split it once.
@functools.lru_cache(maxsize=256)
def sections(text: str) -> tuple[tuple[str, str], ...]:
    """(header, content) pairs in order; text before the first header is under the header ""."""
    found: list[tuple[str, int, int]] = []
    for match in _HEADER.finditer(text):
        header = (match.group("a") or match.group("b") or match.group("c") or "").strip()
        if not match.group("closed") and not _is_known(header):
            continue
        found.append((header, match.start(), match.end()))
    out: list[tuple[str, str]] = []
    start = 0
    header = ""
    for name, begin, end in found:
        out.append((header, text[start:begin]))
        header, start = name, end
        tail = _AFTER_HEADER.match(text, start)
        if tail:
            start = tail.end()
    out.append((header, text[start:]))
    return tuple((name, _clean(content)) for name, content in out if name or content.strip())


def _clean(content: str) -> str:
    content = content.strip()
    for mark in ("**", "*", "`"):  # a whole answer in bold or code: unwrap it
        inner = content[len(mark):-len(mark)] if len(content) > 2 * len(mark) else ""
        if content.startswith(mark) and content.endswith(mark) and mark not in inner:
            return inner.strip()
    return content


def find(text: str, field: Field, *, whole_if_headerless: bool = False) -> str:
    """The content of `field`: the last non-empty section whose header matches.

    Args:
        whole_if_headerless: when the answer has no headers at all, take all of it (the prompt ended with
            this field's header, and the model just continued).

    Raises:
        ParseError: empty answer, or no such section.
    """
    if not text or not text.strip():
        raise ParseError(f"empty answer; expected ### {field.name} ###")
    parts = sections(text)
    for header, content in reversed(parts):
        if content and _header_matches(field, header) and not _PLACEHOLDER_ECHO.match(content):
            return content
    if whole_if_headerless and all(not header for header, _ in parts):
        return _clean(text)
    seen = ", ".join(repr(header) for header, _ in parts if header) or "no sections"
    raise ParseError(f"no ### {field.name} ### section (found {seen})")


def parse_verdict(text: str) -> bool:
    """`True` / `true` / `True.` / `**False**` / `The answer is False` -> bool.

    Raises:
        ParseError: neither or both of true/false appear.
    """
    words = {word.lower() for word in _VERDICT.findall(text)}
    if len(words) != 1:
        first = _VERDICT.match(text.strip().strip("*`\"'“”").strip())
        if first:  # "True. (It is false that ... )": the leading word decides
            return first.group(1).lower() == "true"
        raise ParseError(f"expected True or False, got {_preview(text)!r}")
    return words.pop() == "true"


def judgement(text: str) -> bool:
    """The verdict of a prompt ending with `### Your judgement (True or False) ###`."""
    try:
        section = find(text, JUDGEMENT, whole_if_headerless=True)
    except ParseError:
        # The analysis is there but the judgement header is not: accept a lone True/False on the last line.
        last = text.strip().splitlines()[-1] if text.strip() else ""
        if _VERDICT.fullmatch(last.strip().strip("*`.\"'“” ")):
            return last.strip().strip("*`.\"'“” ").lower() == "true"
        raise
    return parse_verdict(section)


def conditions(text: str, *, limit: int | None = None) -> list[str]:
    """The conditions of the extraction answer, separated by blank lines (or numbered lines): all of them, or
    the first `limit`. The prompt asks for one to three, but models list more and the released data keeps
    them (`aime_18_remove_4`, `amc_75_contradict_6`), so by default none is dropped."""
    try:
        body = find(text, CONDITIONS, whole_if_headerless=True)
    except ParseError:
        body = find(text, PREMISES)
    chunks = [chunk for chunk in re.split(r"\n\s*\n|\\n\\n", body) if chunk.strip()]
    if len(chunks) == 1:
        lines = [line for line in chunks[0].splitlines() if line.strip()]
        if len(lines) > 1 and all(_NUMBERING.match(line) for line in lines):
            chunks = lines
    found = [" ".join(_NUMBERING.sub("", chunk, count=1).split()) for chunk in chunks]
    found = [condition for condition in found if condition]
    if not found:
        raise ParseError("no conditions in ### Extracted Condition ###")
    return found if limit is None else found[:limit]


def _preview(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
