"""Input formats: detection and reading. One module per external format; exports live in `annotator.exports`.

| format       | what                                                                    |
|--------------|-------------------------------------------------------------------------|
| reliablemath | the released dataset: a directory, or single solve / unsol files       |
| check        | the authors' nested `{source}_check.json`                               |
| annotation   | the paper's annotation sheet (Fig. 10), .json / .jsonl / .csv / .parquet |
| table        | any flat .jsonl / .csv / .parquet, columns named with `--map`            |
| treecut      | TreeCut JSONL (`problem`, `answer`, `proof`), parameters in the file name  |
| umwp         | UMWP JSONL / JSON (`id`, `question`, `answer`, `answerable`, ...)          |
| gsm_ic       | GSM-IC JSON / JSONL (`original_question`, `new_question`, ...)             |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from annotator.formats import _io, gsm_ic, reliablemath, table, treecut, umwp
from annotator.records import ImportPart, InputError

IMPORT_FORMATS = ("reliablemath", "check", "annotation", "table", "treecut", "umwp", "gsm_ic")
# The flat export formats read back as tables.
FORMAT_ALIASES = {"jsonl": "table", "csv": "table", "parquet": "table", "sheet": "annotation", "gsm-ic": "gsm_ic"}


@dataclass
class ReadOptions:
    mapping: dict[str, str] = field(default_factory=dict)
    # Who the labels in a labelled sheet belong to; an unknown name becomes a system annotator.
    annotator: str | None = None
    data_source: str | None = None


def detect(path: Path) -> str:
    """The format of a file or directory, from its layout and its first record."""
    if not path.exists():
        raise InputError(str(path), "no such file or directory")
    if path.is_dir():
        if reliablemath.is_release_dir(path):
            return "reliablemath"
        if treecut.is_treecut_dir(path):
            return "treecut"
        raise InputError(
            str(path), "is a directory but neither a ReliableMath release (solve.json, unsol.json, solve/, unsol/) "
            "nor TreeCut files"
        )
    sample = _io.first_row(path)
    if sample is None:
        # Let the reader raise its own precise error (empty file, bad JSON, bad UTF-8...).
        list(_io.rows(path))
        raise InputError(str(path), "holds no records")
    if treecut.is_treecut_record(sample):
        return "treecut"
    if umwp.is_umwp_record(sample):
        return "umwp"
    if gsm_ic.is_gsm_ic_record(sample):
        return "gsm_ic"
    kind = reliablemath.kind_of(sample)
    if kind in ("solve", "unsol") and path.suffix.lower() == ".json":
        return "reliablemath"
    if kind == "check":
        return "check"
    if kind in ("sheet", "unsol"):
        return "annotation"
    if kind == "solve":
        return "table"
    raise InputError(
        str(path),
        f"cannot tell the format from its fields ({', '.join(sorted(sample)[:8])}); give --format and, for a "
        "flat table, --map (e.g. --map question=problem,ground_truth=answer)",
    )


def read(path: Path, *, format: str | None = None, options: ReadOptions | None = None) -> list[ImportPart]:
    """The import parts of one path; nothing is read from disk beyond what detection needs until iterated."""
    options = options or ReadOptions()
    if not path.exists():
        raise InputError(str(path), "no such file or directory")
    if format:
        fmt = FORMAT_ALIASES.get(format, format)
    else:
        # A column mapping only makes sense for a flat table; otherwise the file says what it is.
        fmt = "table" if options.mapping else detect(path)
    annotator = options.annotator or f"import:{path.name}"
    if fmt == "reliablemath":
        return reliablemath.read_release(path)
    if fmt == "check":
        return [reliablemath.read_check(path, annotator=annotator)]
    if fmt == "treecut":
        return treecut.read_path(path)
    if fmt == "umwp":
        return [umwp.read_file(path)]
    if fmt == "gsm_ic":
        return [gsm_ic.read_file(path)]
    if fmt in ("annotation", "table"):
        return [table.read_table(path, mapping=options.mapping, annotator=annotator, data_source=options.data_source)]
    raise InputError(str(path), f"unknown format {format!r}; choose one of {', '.join(IMPORT_FORMATS)}")


__all__ = ["IMPORT_FORMATS", "ImportPart", "InputError", "ReadOptions", "detect", "read"]
