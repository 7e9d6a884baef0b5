"""Text-safe Markdown: dataset and model text shown as text plus math, and nothing else.

Everything shown from data (questions, conditions, reasons, model responses, comments, tags, data sources,
model names, messages that quote them) goes through `escape_markdown` before any Streamlit call that renders
Markdown (`st.markdown`, `st.caption`, alerts, toasts, and widgets' labels, options and tooltips). Streamlit
(1.67, `StreamlitMarkdown`) renders GFM with directives, emoji shortcodes, autolinks and typographic arrows, and
math through KaTeX (`trust` off) only when its own regex finds math. We never hand it data it would read as
anything but text or math:

- **Text** (outside math): every ASCII punctuation character is backslash-escaped, so no Markdown, HTML,
  directive or emoji syntax survives the parser. The rewrites Streamlit applies to the *parsed* text (where the
  escapes are gone) are defused by an invisible U+2060 WORD JOINER at their trigger (`:` of `:name:`, `://`,
  `www.`, the `@` of an address, `->`-style arrows): the characters shown are the data's, plus that joiner.
- **Math** (`$...$`, `$$...$$`, `\\(...\\)`, `\\[...\\]`): each segment is checked on its own (`math_markdown`):
  whitespace folded (a blank line would end the math), and rendered as math only if nothing in it could mean
  anything to Markdown should the math not be recognised (no `$`, backtick, link or image syntax, URL,
  directive, trailing backslash or trust-gated KaTeX command such as `\\href`); a `<` that could open an HTML tag
  gets a space after it. Otherwise the whole segment is shown as escaped text. Every segment emitted matches
  Streamlit's math regex by itself (a joiner separates adjacent ones), so the math plugin is always loaded.

The diff (`ui.diff`) builds on `split_math`, `escape_text` and `math_markdown`, comparing math segments as
single tokens.
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
JOINER = "\u2060"  # WORD JOINER: invisible, zero width, no line break

# What Streamlit rewrites in parsed text: emoji shortcodes and `:streamlit:` (a colon, a name, a colon), URLs
# and `www.` (GFM autolink literals), e-mail addresses, and arrows or comparisons standing alone.
_TEXT_REWRITES = re.compile(
    r"(?P<colon>:)(?=[\w+-]+:|//)"
    r"|(?P<www>www)(?=\.)"
    r"|(?<=[-.\w+])(?=@[-\w])"
    r"|(?<!\S)(?P<arrow>[-<>~])(?=(?:->|-|>|=)(?!\S))",
    re.IGNORECASE,
)
# In math, what would be Markdown, a URL, a directive or a trust-gated KaTeX command if the math were not
# recognised, or could end it early (`~~~` would open a code fence where display math starts a line).
_UNSAFE_MATH = re.compile(
    r"[$`]|~~~|\]\(|!\[|://|www\.|:[a-z][a-z0-9-]*\[|\\$"
    r"|\\(?:href|url|includegraphics|html[A-Za-z]*)(?![A-Za-z])",
    re.IGNORECASE,
)
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")


@dataclass(frozen=True)
class Piece:
    """A run of plain text, or one math segment (its LaTeX without delimiters, and `source` with them)."""

    text: str
    math: Literal["", "inline", "display"] = ""
    source: str = ""


def split_math(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    position = 0
    for match in _MATH.finditer(text):
        if match.start() > position:
            pieces.append(Piece(text[position : match.start()]))
        kind = match.lastgroup or ""
        body = match.group(kind)
        pieces.append(Piece(body, "display" if kind in ("dd", "db") else "inline", match.group(0)))
        position = match.end()
    if position < len(text):
        pieces.append(Piece(text[position:]))
    return pieces


def _defuse(line: str) -> str:
    """A joiner at each place Streamlit would rewrite parsed text (see the module docstring)."""
    return _TEXT_REWRITES.sub(lambda match: match.group(0) + JOINER, line)


def escape_text(text: str) -> str:
    """Plain text (no math) with every ASCII punctuation character backslash-escaped, line by line."""
    out = []
    for index, line in enumerate(text.split("\n")):
        # Spaces starting a line would make an indented code block; punctuation would be Markdown or HTML.
        if index:
            line = line.lstrip(" \t")
        out.append("".join("\\" + char if char in _PUNCTUATION else char for char in _defuse(line)))
    return "  \n".join(out)


def math_body(piece: Piece) -> str | None:
    """The segment's LaTeX on one line if it is safe to render as math (see the module docstring), else None."""
    body = " ".join(piece.text.split())
    if not body or _UNSAFE_MATH.search(body):
        return None
    # `<` before a letter, `/`, `!` or `?` would open an HTML tag or comment should the math not be recognised;
    # a space after it changes nothing in math.
    return _TAG_OPEN.sub("< ", body)


def math_markdown(piece: Piece, *, inline: bool = False) -> str:
    """One math segment as Markdown math (`inline`: display math too as `$...$`), or, when it is not safe as
    math, its source as escaped text."""
    body = math_body(piece)
    if body is None:
        return escape_text(piece.source or piece.text)
    if piece.math == "display" and not inline:
        return f"\n\n$$\n{body}\n$$\n\n"  # a block of its own: it never has to interrupt a paragraph
    return f"${body}$"


def _needs_joiner(previous: str, following: str) -> bool:
    """After inline math, a digit or `$` would keep Streamlit from seeing the math (or end it elsewhere)."""
    return previous.endswith("$") and following[:1] in ("$", *string.digits)


def escape_markdown(text: str | None) -> str:
    """`text` as Markdown that shows it literally (no HTML, links, emphasis or directives), its LaTeX as math."""
    if not text:
        return ""
    text = text.lstrip(" \t")
    out = ""
    after_display = False
    for piece in split_math(text):
        if piece.math:
            part = math_markdown(piece)
        else:
            # Text right after display math starts a line: leading spaces would make it a code block.
            part = escape_text(piece.text.lstrip(" \t") if after_display else piece.text)
        if _needs_joiner(out, part):
            out += JOINER
        out += part
        after_display = piece.math == "display"
    return out
