"""Text-safe Markdown: problem, dataset and model text shown literally, its LaTeX rendered as math.

Problem and model text is shown as Markdown with LaTeX, never as HTML: every ASCII punctuation character
outside a math segment is backslash-escaped, so `<script>`, `<img onerror=...>`, links, images, emphasis,
`:emoji:` codes and Streamlit's `:color[...]` directives in a candidate all show as the literal text.
Math segments (`$...$`, `$$...$$`, `\\(...\\)`, `\\[...\\]`) are kept whole, both for the renderer (KaTeX,
which escapes HTML itself) and for the diff, which compares them as single tokens.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal

# A `$...$` segment follows Pandoc's rule (no space just inside the dollars, no digit right after the
# closing one), so "costs $5 and $10" stays text; it may not contain another `$`.
_MATH = re.compile(
    r"\$\$(?P<dd>.+?)\$\$"
    r"|\\\[(?P<db>.+?)\\\]"
    r"|\\\((?P<ib>.+?)\\\)"
    r"|\$(?P<id>(?=[^\s$])[^$]*?[^\s$\\])\$(?!\d)"
    r"|\$(?P<i1>[^\s$])\$(?!\d)",
    re.DOTALL,
)
_PUNCTUATION = set(string.punctuation)


@dataclass(frozen=True)
class Piece:
    """A run of plain text, or one math segment (its LaTeX without delimiters)."""

    text: str
    math: Literal["", "inline", "display"] = ""


def split_math(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    position = 0
    for match in _MATH.finditer(text):
        if match.start() > position:
            pieces.append(Piece(text[position : match.start()]))
        kind = match.lastgroup or ""
        body = match.group(kind)
        pieces.append(Piece(body, "display" if kind in ("dd", "db") else "inline"))
        position = match.end()
    if position < len(text):
        pieces.append(Piece(text[position:]))
    return pieces


def escape_text(text: str) -> str:
    """Plain text (no math) with every ASCII punctuation character backslash-escaped, line by line."""
    out = []
    for index, line in enumerate(text.split("\n")):
        # Spaces starting a line would make an indented code block; punctuation would be Markdown or HTML.
        if index:
            line = line.lstrip(" \t")
        out.append("".join("\\" + char if char in _PUNCTUATION else char for char in line))
    return "  \n".join(out)


def _math(piece: Piece) -> str:
    body = piece.text.strip()
    if piece.math == "display":
        return f"\n$$\n{body}\n$$\n"
    return f"${body}$"


def escape_markdown(text: str | None) -> str:
    """`text` as Markdown that shows it literally (no HTML, links, emphasis or directives), its LaTeX as math."""
    if not text:
        return ""
    text = text.lstrip(" \t")
    return "".join(_math(piece) if piece.math else escape_text(piece.text) for piece in split_math(text))
