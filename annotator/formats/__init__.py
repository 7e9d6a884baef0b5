"""Input formats: detection and reading, one module per external format; writing lives in `annotator.exports`.

Each module has `sniff(path)` and `read(path, options)`; `registry.FORMATS` is the one list of them (name,
module, description, aliases), in detection order. Readers take `ReadOptions` and yield the records of
`annotator.records` and touch no database: `annotator.importer` writes what they yield. Importing this package
loads no reader; `detect` and `read` load those they try.
"""

from __future__ import annotations

from annotator.formats.reading import detect, read, read_all
from annotator.formats.registry import FORMATS, Format, aliases, find, registry
from annotator.records import ImportPart, InputError, InputErrors, ReadOptions

__all__ = ["FORMATS", "Format", "ImportPart", "InputError", "InputErrors", "ReadOptions", "aliases", "detect", "find",
           "read", "read_all", "registry"]
