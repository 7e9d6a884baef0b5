"""Input formats: detection and reading, one module per external format; writing lives in
`annotator.import_export.exports`.

Each module has `sniff(path)` and `read(path, options)`; `registry.FORMATS` is the one list of them (name,
module, description, aliases), in detection order. Readers take `ReadOptions` and yield the records of
`annotator.import_export.records` and touch no database: `annotator.import_export.importer` writes what they yield.
Importing this package loads no reader; `detect` and `read` load those they try.
"""

from __future__ import annotations

from annotator.import_export.formats.reading import detect, read, read_all
from annotator.import_export.formats.registry import FORMATS, Format, aliases, find, registry
from annotator.import_export.records import ImportPart, InputError, InputErrors, ReadOptions

__all__ = ["FORMATS", "Format", "ImportPart", "InputError", "InputErrors", "ReadOptions", "aliases", "detect", "find",
           "read", "read_all", "registry"]
