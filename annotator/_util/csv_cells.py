"""CSV cells a spreadsheet cannot run as formulas (OWASP "CSV Injection"), and the original text back on import.

Every CSV file we write goes through `DictWriter`; every CSV file we read (`formats._io.csv_rows`) through
`restore`. A text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a `'` in front, so
Excel, LibreOffice and Google Sheets show it as text instead of evaluating it. Numbers stay numbers: int and
float values are written as they are, and so is text that is a plain decimal number (`-5`, `+1.5e3`, the
JSON text of a negative ground truth), which a spreadsheet reads as that number and cannot run.

The scheme is reversible, so an import gives every text back exactly: text that already starts with one or more
`'` followed by one of those characters (`'=A1` written by someone) also gets one more `'`; `restore` removes
one `'` exactly from a cell that starts with `'`s followed by one of those characters, and leaves any other
cell alone (`'quoted'` stays as it is). JSONL, JSON and Parquet never need this: they keep the exact text.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from typing import Any

# The first characters that make a spreadsheet evaluate a cell (OWASP).
TRIGGERS = frozenset("=+-@\t\r")
_NEEDS_A_LOOK = TRIGGERS | {"'"}
# Text that is only a decimal number: a spreadsheet reads it as that number, never as a formula.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _quoted_trigger(text: str) -> bool:
    """`text` is one or more `'` followed by a trigger character."""
    rest = text.lstrip("'")
    return rest != text and rest[:1] in TRIGGERS


def neutralise(value: Any) -> Any:
    """A value as a CSV cell holds it safely: text starting with a trigger character (or `'`s and then one)
    gets a `'` in front; numbers, plain-number text and anything else stay as they are."""
    if type(value) is not str or not value or value[0] not in _NEEDS_A_LOOK:
        return value  # the common case, decided on the first character
    if value[0] == "'":
        return "'" + value if _quoted_trigger(value) else value
    return value if _NUMBER.fullmatch(value) else "'" + value


def restore(cell: str | None) -> str | None:
    """The text `neutralise` was given: one leading `'` removed exactly where it added one (a missing cell,
    None, stays None)."""
    if cell is None or cell[:1] != "'":
        return cell
    return cell[1:] if _quoted_trigger(cell) else cell


class DictWriter(csv.DictWriter):  # type: ignore[type-arg]
    """`csv.DictWriter` whose cells go through `neutralise` (the header is our own column names, as they are)."""

    def writeheader(self) -> Any:
        return self.writer.writerow(self.fieldnames)

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({key: neutralise(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for rowdict in rowdicts:
            self.writerow(rowdict)


__all__ = ["TRIGGERS", "DictWriter", "neutralise", "restore"]
