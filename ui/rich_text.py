"""Dataset and model text for the browser's queue component (`ui/components/queue`): runs of plain text and of
typeset math, never HTML.

A run is `{"t": text}` (shown as text: the browser sets it as a text node, so Markdown, HTML and links in the
data stay literal), `{"m": mathml}` (one math segment, `$...$` and the like as `ui.markdown.split_math` finds
them, typeset here: LaTeX to MathML by `latex2mathml`, then through an allow-list of MathML elements and
attributes by `nh3`; the browser rebuilds it element by element against the same list), with `"k": "add"` or
`"del"` where the diff highlights it, `"s"` the math's source as written where asked, `"b": 1` for bold and
`"c": 1` for code in the text we wrote (the guideline).
Math that does not convert, or is not safe as math (`ui.markdown.math_body`), is shown as its source text.
Typesetting is cached: the queue typesets each candidate once, when it is claimed ahead, not on a key.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import nh3
from latex2mathml.converter import convert

from ui.diff import Segment, word_diff
from ui.markdown import Piece, math_body, split_math

Run = dict[str, Any]
MATH_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot", "msup", "msub", "msubsup",
    "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose",
    "semantics", "annotation", "merror", "mmultiscripts", "mprescripts", "none",
})
MATH_ATTRIBUTES = frozenset({
    "display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "columnalign", "rowspacing",
    "columnspacing", "columnlines", "rowlines", "frame", "accent", "accentunder", "movablelimits", "width", "height",
    "depth", "minsize", "maxsize", "notation", "displaystyle", "scriptlevel", "linethickness", "symmetric",
    "largeop", "form", "encoding",
})
_CLEAN = functools.partial(nh3.clean, tags=set(MATH_TAGS), attributes={"*": set(MATH_ATTRIBUTES)},
                           url_schemes=set(), link_rel=None, strip_comments=True)
_GUIDE_INLINE = re.compile(r"\*\*(?P<b>.+?)\*\*|`(?P<c>[^`]+)`")


@functools.lru_cache(maxsize=4096)
def mathml(latex: str, *, display: bool = False) -> str | None:
    """One LaTeX segment (without delimiters) as sanitized MathML, or None when it does not convert."""
    try:
        markup = convert(latex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001  (latex2mathml raises many kinds on bad LaTeX: then the source is shown)
        return None
    cleaned = _CLEAN(markup)
    return cleaned if cleaned.startswith("<math") else None


def _piece(piece: Piece, kind: str | None = None, *, source: bool = False) -> Run:
    body = math_body(piece) if piece.math else None
    markup = None if body is None else mathml(body, display=piece.math == "display")
    run: Run = {"t": piece.source or piece.text} if markup is None else {"m": markup}
    if source and markup is not None:
        run["s"] = piece.source
    if kind:
        run["k"] = kind
    return run


def runs(text: Any, *, kind: str | None = None, source: bool = False) -> list[Run]:
    """A field as runs: text and typeset math (anything not a string as its JSON text); `source`: each math run
    also carries its source as written (`"s"`, delimiters included), for a page that shows either."""
    if text is None or text == "":
        return [{"t": "—"}]
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    return [_piece(piece, kind, source=source) for piece in split_math(text)]


def _side(segments: list[Segment], *, new: bool) -> list[Run]:
    changed, kind = (("insert", "replace"), "add") if new else (("delete", "replace"), "del")
    out: list[Run] = []
    for segment in segments:
        text = segment.new if new else segment.old
        if text and segment.op in ("equal", *changed):
            out.extend(runs(text, kind=kind if segment.op in changed else None))
    return out or [{"t": "—"}]


@functools.lru_cache(maxsize=256)
def _diff(old: str | None, new: str | None) -> tuple[tuple[Run, ...], tuple[Run, ...], bool]:
    segments = word_diff(old, new)
    return (tuple(_side(segments, new=False)), tuple(_side(segments, new=True)),
            any(segment.op != "equal" for segment in segments))


def diff(old: str | None, new: str | None) -> tuple[list[Run], list[Run], bool]:
    """The original and the rewritten question as runs, the words the rewrite removed (`del`) or added (`add`)
    marked, and whether they differ."""
    left, right, changed = _diff(old, new)
    return list(left), list(right), changed


def guide(markdown: str) -> list[list[Run]]:
    """Text we wrote in a little Markdown (paragraphs, `**bold**`, `` `code` ``) as paragraphs of runs."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", markdown.strip()):
        line: list[Run] = []
        position = 0
        for match in _GUIDE_INLINE.finditer(block):
            if match.start() > position:
                line.append({"t": block[position:match.start()]})
            line.append({"t": match.group("b"), "b": 1} if match.group("b") else {"t": match.group("c"), "c": 1})
            position = match.end()
        if position < len(block):
            line.append({"t": block[position:]})
        paragraphs.append(line)
    return paragraphs
