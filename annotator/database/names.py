"""What a name may hold: the one rule for the names of models, prompts, data sources, tags and accounts.

A name is shown in tables, menus, file names and terminals and compared as it is stored, so it holds no
character that is invisible or that changes how the text around it is drawn:

- control characters (Unicode category Cc: NUL, tab, newline, escape, DEL, the C1 controls);
- format characters (category Cf): the bidirectional overrides, embeddings, isolates and marks (U+202A-U+202E,
  U+2066-U+2069, U+200E, U+200F, U+061C), zero-width spaces and joiners used to hide text (U+200B, U+2060,
  U+FEFF), the tag characters (U+E0000-U+E007F), the soft hyphen... Only the zero-width non-joiner and joiner
  (U+200C, U+200D) are kept: Persian, the Indic scripts and emoji sequences need them inside words;
- line and paragraph separators (U+2028, U+2029) and lone surrogates, which no database stores as text.

PostgreSQL refuses NUL in text and SQLite keeps it, so without this rule the same file would import on one and
fail on the other; with it both refuse the same names with the same message. The check is `str.isprintable`
first (in C, true of nearly every name), then the category of each character that is not printable.
"""

from __future__ import annotations

import unicodedata

_KEPT_FORMAT = frozenset("\u200c\u200d")  # zero-width non-joiner and joiner: parts of words in several scripts
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


class BadName(ValueError):
    """A name holding a character no name may hold; the message names the character and where it is."""


def _refused(char: str) -> bool:
    return unicodedata.category(char) in _REFUSED_CATEGORIES and char not in _KEPT_FORMAT


def _describe(char: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`; control characters and surrogates have no Unicode name: `U+0000 (a
    control character)`."""
    name = unicodedata.name(char, "") or ("(a lone surrogate)" if unicodedata.category(char) == "Cs"
                                          else "(a control character)")
    return f"U+{ord(char):04X} {name}"


def problem(name: str) -> str | None:
    """Why `name` cannot be a name (its first refused character and where), or None when it can."""
    if name.isprintable():
        return None
    for index, char in enumerate(name):
        if _refused(char):
            return (f"holds {_describe(char)} at character {index + 1}: names may not hold control, "
                    "format or bidirectional characters")
    return None


def shown(name: str, limit: int = 80) -> str:
    """`name` quoted for a message, every refused character written as its escape (`\\u202e`), so that the
    message itself shows what the name holds and draws nothing invisible or reversed."""
    text = name if len(name) <= limit else name[: limit - 3] + "..."
    return repr(text) if text.isprintable() else f"'{cleaned(text)}'"


def check(name: str, *, what: str) -> str:
    """`name` when it may be a name; `BadName` naming `what` (e.g. "model", "--prompt") and the character
    otherwise."""
    if (why := problem(name)) is not None:
        raise BadName(f"{what} {shown(name)} {why}")
    return name


def cleaned(name: str) -> str:
    """`name` with each refused character written as its escape: for names made from something that is not a
    name and need not be refused (a file's name in an import's pseudo-annotator `import:FILE`)."""
    if name.isprintable():
        return name
    return "".join(char.encode("unicode_escape").decode("ascii") if _refused(char) else char for char in name)
