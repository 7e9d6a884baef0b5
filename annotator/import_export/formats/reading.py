"""Reading paths in any registered format: detection (the formats of `registry.FORMATS`, in their order), one
path (`read`), several with every bad file told (`read_all`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from annotator.import_export.formats import _io
from annotator.import_export.formats.registry import FORMATS, Format, find
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    InputError,
    InputErrors,
    ProblemRecord,
    ReadOptions,
    TranscriptRecord,
    in_range,
)


def _require_exists(path: Path) -> None:
    if not path.exists():
        raise InputError(str(path), "no such file or directory")


def _detect(path: Path) -> Format:
    _require_exists(path)
    if path.is_dir():
        found = next((fmt for fmt in FORMATS if fmt.sniff(path)), None)
        if found is None:
            raise InputError(
                str(path), "is a directory but neither a ReliableMath release (solve.json, unsol.json, solve/, unsol/) "
                "nor TreeCut files"
            )
        return found
    by_file = next((fmt for fmt in FORMATS if fmt.by_file and fmt.sniff(path)), None)
    if by_file is not None:
        return by_file
    with _io.sampling():
        sample = _io.first_row(path)
        if sample is None:
            # Let the reader raise its own precise error (empty file, bad JSON, bad UTF-8...).
            list(_io.rows(path))
            raise InputError(str(path), "holds no records")
        found = next((fmt for fmt in FORMATS if fmt.sniff(path)), None)
    if found is None:
        raise InputError(
            str(path),
            f"cannot tell the format from its fields ({', '.join(sorted(sample)[:8])}); give --format and, for a "
            "flat table, --map (e.g. --map question=problem,ground_truth=answer)",
        )
    return found


def detect(path: Path) -> str:
    """The format of a file or directory, from its layout and its first record."""
    return _detect(path).name


def read(path: Path, *, format: str | None = None, options: ReadOptions | None = None) -> list[ImportPart]:
    """The import parts of one path; nothing is read from disk beyond what detection needs until iterated."""
    options = options or ReadOptions()
    if not format and not options.mapping:
        fmt = _detect(path)
    else:
        _require_exists(path)
        # A column mapping only makes sense for a flat table; otherwise the file says what it is.
        name = format or "table"
        found = find(name)
        if found is None:
            choices = ", ".join(fmt.name for fmt in FORMATS)
            raise InputError(str(path), f"unknown format {format!r}; choose one of {choices}")
        fmt = found
    parts = fmt.read(path, options)
    for part in parts:
        # Every reader's integers are checked against their ranges here, once, as the records stream.
        part.records = in_range(part.records)
    return parts


def read_all(
    paths: Iterable[Path], *, format: str | None = None, options: ReadOptions | None = None
) -> list[ImportPart]:
    """The import parts of several paths, every file's error told: a path that cannot be read, or whose records
    turn out bad as they stream, is noted and the others are still read (after the first error only checked:
    their records no longer reach the importer); the last part raises them all (`InputErrors`, in the order of
    `paths`) once it is read, inside the import's transaction. An import that fails on the database (a conflict)
    stops there."""
    errors: list[tuple[int, InputError]] = []
    parts: list[tuple[int, ImportPart]] = []
    for index, path in enumerate(paths):
        try:
            parts += [(index, part) for part in read(path, format=format, options=options)]
        except InputError as exc:
            errors.append((index, exc))
    if not parts and errors:
        raise InputErrors.of([error for _index, error in errors])
    for number, (index, part) in enumerate(parts):
        part.records = _told(part.records, errors, index=index, last=number == len(parts) - 1)
    return [part for _index, part in parts]


Record = ProblemRecord | CandidateRecord | TranscriptRecord


def _told(records: Iterable[Record], errors: list[tuple[int, InputError]], *, index: int,
          last: bool) -> Iterator[Record]:
    try:
        if errors:
            for _record in records:  # an earlier file failed: checked, not imported
                pass
        else:
            yield from records
    except InputError as exc:
        errors.append((index, exc))
    if last and errors:
        raise InputErrors.of([error for _index, error in sorted(errors, key=lambda pair: pair[0])])
