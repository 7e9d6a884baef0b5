"""The one registry of input formats: each format module declares a `Format`; detection and `read` walk them.

To add a format: write `annotator/formats/<name>.py` with `sniff(path) -> bool`, `read(path, options)` and
`FORMAT = Format(name, sniff, read)`, list it in `registry()` at its place in the detection order, and add its
name, description and any aliases to `names.py` (a test checks that both list the same formats in one order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from annotator.formats import _io, names
from annotator.records import (
    CandidateRecord,
    ImportPart,
    InputError,
    InputErrors,
    ProblemRecord,
    TranscriptRecord,
    in_range,
)


@dataclass
class ReadOptions:
    mapping: dict[str, str] = field(default_factory=dict)
    # Who the labels in a labelled sheet belong to; an unknown name becomes a system annotator.
    annotator: str | None = None
    data_source: str | None = None
    # Transcripts from a harness (lm_eval, openai_batch): the model and prompt names to store them under instead
    # of the ones the files give, and how an lm-eval doc names its item (a doc field, or a doc_id -> data_id file).
    model: str | None = None
    prompt: str | None = None
    id_field: str | None = None
    id_map: Path | None = None

    def annotator_for(self, path: Path) -> str:
        """Whose labels the file at `path` holds: the given name, else a pseudo-annotator for the file."""
        return self.annotator or f"import:{path.name}"


@dataclass(frozen=True)
class Format:
    """An input format: its name (what `--format` takes) and how to recognise and read a path (a file, or a
    directory for the formats that read one). Its description and aliases are in `names.py`."""

    name: str
    sniff: Callable[[Path], bool]
    read: Callable[[Path, ReadOptions], list[ImportPart]]
    # True when `sniff` recognises the file itself (e.g. an Inspect `.eval` archive), not its first record.
    by_file: bool = False

    @property
    def description(self) -> str:
        return names.FORMATS[self.name]

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(alias for alias, name in names.ALIASES.items() if name == self.name)


@cache
def registry() -> dict[str, Format]:
    """Every format by name, in detection order: a path is read by the first format whose `sniff` accepts it."""
    # Imported here: the format modules import this one, and listing the names must not load every reader.
    from annotator.formats import (
        annotation,
        batch,
        check,
        gsm_ic,
        inspect_log,
        lm_eval,
        openai_batch,
        reliablemath,
        table,
        transcripts,
        treecut,
        umwp,
    )

    # An Excel batch is known by its extension. Formats with keys of their own come before ReliableMath's
    # shapes, which overlap (a release file, a check file, a sheet); a flat table of problems is the last resort.
    ordered = (batch, inspect_log, transcripts, lm_eval, openai_batch, treecut, umwp, gsm_ic, reliablemath, check,
               annotation, table)
    return {module.FORMAT.name: module.FORMAT for module in ordered}


def aliases() -> dict[str, str]:
    """Other names `--format` accepts, e.g. the flat export formats (jsonl, csv, parquet) read back as tables."""
    return {alias: fmt.name for fmt in registry().values() for alias in fmt.aliases}


def _require_exists(path: Path) -> None:
    if not path.exists():
        raise InputError(str(path), "no such file or directory")


def _detect(path: Path) -> Format:
    _require_exists(path)
    formats = registry().values()
    if path.is_dir():
        found = next((fmt for fmt in formats if fmt.sniff(path)), None)
        if found is None:
            raise InputError(
                str(path), "is a directory but neither a ReliableMath release (solve.json, unsol.json, solve/, unsol/) "
                "nor TreeCut files"
            )
        return found
    by_file = next((fmt for fmt in formats if fmt.by_file and fmt.sniff(path)), None)
    if by_file is not None:
        return by_file
    with _io.sampling():
        sample = _io.first_row(path)
        if sample is None:
            # Let the reader raise its own precise error (empty file, bad JSON, bad UTF-8...).
            list(_io.rows(path))
            raise InputError(str(path), "holds no records")
        found = next((fmt for fmt in formats if fmt.sniff(path)), None)
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
        found = registry().get(aliases().get(name, name))
        if found is None:
            raise InputError(str(path), f"unknown format {format!r}; choose one of {', '.join(registry())}")
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
