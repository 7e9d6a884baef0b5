"""Word-level diff of the original and the rewritten question, as highlighted text-safe Markdown.

Math segments are compared as single tokens; everything else goes through `ui.markdown`, so the diff shows
dataset text literally.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from typing import Literal

from ui.markdown import escape_markdown, escape_text, math_body, math_markdown, split_math

Op = Literal["equal", "delete", "insert", "replace"]


@dataclass(frozen=True)
class Segment:
    """One step of the diff: `old` is text of the original question, `new` of the rewritten one."""

    op: Op
    old: str
    new: str


def _tokens(text: str) -> list[str]:
    """Words and math segments, each with the whitespace that follows it."""
    tokens: list[str] = []
    for piece in split_math(text):
        if piece.math:
            tokens.append(piece.source)
        else:
            tokens.extend(re.findall(r"\s+|\S+\s*", piece.text))
    # Whitespace on its own (a leading space, or the space after a math segment) joins the token before it.
    merged: list[str] = []
    for token in tokens:
        if merged and token.isspace():
            merged[-1] += token
        else:
            merged.append(token)
    return merged


def word_diff(old: str | None, new: str | None) -> list[Segment]:
    """The word-level difference between the original and the rewritten question (difflib)."""
    a, b = _tokens(old or ""), _tokens(new or "")
    matcher = difflib.SequenceMatcher(None, [t.strip() for t in a], [t.strip() for t in b], autojunk=False)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        segments.append(Segment(op, "".join(a[i1:i2]), "".join(b[j1:j2])))  # type: ignore[arg-type]
    return segments


def changed(segments: list[Segment]) -> bool:
    return any(segment.op != "equal" for segment in segments)


def _highlight(text: str, color: str) -> str:
    stripped = text.strip()
    if not stripped:
        return text
    parts = []
    for piece in split_math(stripped):
        body = math_body(piece) if piece.math else None
        if body is not None and ("[" in body or "]" in body):
            # A bracket inside the LaTeX would end the directive early; such math is shown unhighlighted.
            parts.append(math_markdown(piece, inline=True))
        elif body is not None:
            parts.append(f":{color}-background[{math_markdown(piece, inline=True)}]")
        elif (words := piece.source or piece.text).strip():
            # A directive cannot span lines; the highlighted words (or math shown as text) are shown on one.
            lead = " " if words[:1].isspace() else ""
            tail = " " if words[-1:].isspace() else ""
            parts.append(f"{lead}:{color}-background[{escape_text(' '.join(words.split()))}]{tail}")
        else:
            parts.append(piece.text)
    trailing = " " if text[-1:].isspace() else ""
    return "".join(parts) + trailing


def _render(segments: list[Segment], *, new: bool) -> str:
    """One side of the diff: unchanged words as text, the words this side lost or gained highlighted."""
    changed, color = (("insert", "replace"), "green") if new else (("delete", "replace"), "red")
    parts = []
    for segment in segments:
        text = segment.new if new else segment.old
        if segment.op == "equal":
            parts.append(escape_markdown(text))
        elif segment.op in changed:
            parts.append(_highlight(text, color))
    return "".join(parts)


def render_old(segments: list[Segment]) -> str:
    """The original question with the words the rewrite removed or replaced highlighted in red."""
    return _render(segments, new=False)


def render_new(segments: list[Segment]) -> str:
    """The rewritten question with the words the rewrite added or changed highlighted in green."""
    return _render(segments, new=True)


@functools.lru_cache(maxsize=256)
def side_by_side(old: str | None, new: str | None) -> tuple[str, str, bool]:
    """The original and the rewritten question as highlighted Markdown, and whether they differ.

    Cached, so that reruns showing the same candidate (typing a comment, opening the guideline) do not
    diff it again.
    """
    segments = word_diff(old, new)
    return render_old(segments), render_new(segments), changed(segments)
