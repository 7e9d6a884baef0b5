"""The one list of input formats, in detection order: a path is read by the first format whose `sniff` accepts it.

Each entry names the format (what `--format` and the Import and export page take), the module that reads it,
a one-line description and any other names it answers to. Nothing here loads a reader: the command line builds
its help from this list at start-up, and a format's module is imported only when it sniffs or reads a path.

To add a format: write its module (`sniff(path) -> bool`, `read(path, options) -> list[ImportPart]`) and add
one entry here, at its place in the detection order.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotator.import_export.records import ImportPart, ReadOptions


@dataclass(frozen=True)
class Format:
    """An input format: its name, the module that reads it (`sniff(path) -> bool`, `read(path, options) ->
    list[ImportPart]`; a path is a file, or a directory for the formats that read one), what it is, the other
    names it answers to, and `by_file` when `sniff` knows the file itself (an Inspect `.eval` archive) rather
    than its first record."""

    name: str
    module: str
    description: str
    aliases: tuple[str, ...] = ()
    by_file: bool = False

    def reader(self) -> ModuleType:
        return importlib.import_module(self.module)

    def sniff(self, path: Path) -> bool:
        return bool(self.reader().sniff(path))

    def read(self, path: Path, options: ReadOptions) -> list[ImportPart]:
        parts: list[ImportPart] = self.reader().read(path, options)
        return parts


# Formats with keys of their own come before ReliableMath's shapes, which overlap (a release file, a check file,
# a sheet); a flat table of problems is the last resort.
FORMATS: tuple[Format, ...] = (
    Format("batch", "annotator.import_export.formats.batch",
           "an annotator's Excel batch (.xlsx from `batches`), filled in: their labels", aliases=("xlsx",)),
    Format("inspect_log", "annotator.import_export.formats.inspect_log",
           "an Inspect AI eval log (.eval or .json): one transcript per sample", aliases=("inspect",), by_file=True),
    Format("transcripts", "annotator.import_export.formats.transcripts",
           "model transcripts, JSONL / JSON (data_id, model, prompt, response, ...)"),
    Format("lm_eval", "annotator.import_export.formats.lm_eval",
           "lm-evaluation-harness --log_samples output (samples_<task>_<time>.jsonl): one transcript per answer",
           aliases=("lm-eval",)),
    Format("openai_batch", "annotator.import_export.formats.openai_batch",
           "an OpenAI Batch API output file (JSONL, custom_id = data_id, data_id/prompt or data_id/prompt/sample)",
           aliases=("openai-batch",)),
    Format("treecut", "annotator.import_export.formats.treecut",
           "TreeCut JSONL (problem, answer, proof), parameters in the file name, or a directory of them"),
    Format("umwp", "annotator.import_export.formats.umwp",
           "UMWP JSONL / JSON (id, question, answer, answerable, ...)"),
    Format("gsm_ic", "annotator.import_export.formats.gsm_ic",
           "GSM-IC JSON / JSONL (original_question, new_question, ...)", aliases=("gsm-ic",)),
    Format("reliablemath", "annotator.import_export.formats.reliablemath",
           "the ReliableMath release (a directory, or one solve / unsol .json file)"),
    Format("check", "annotator.import_export.formats.check", "the ReliableMath authors' nested {source}_check.json"),
    Format("annotation", "annotator.import_export.formats.annotation",
           "the paper's annotation sheet (Fig. 10), .json / .jsonl / .csv / .parquet", aliases=("sheet",)),
    # The flat export formats read back as tables.
    Format("table", "annotator.import_export.formats.table",
           "any flat .jsonl / .csv / .parquet, columns named with --map", aliases=("jsonl", "csv", "parquet")),
)


def registry() -> dict[str, Format]:
    """Every format by name, in detection order."""
    return {fmt.name: fmt for fmt in FORMATS}


def aliases() -> dict[str, str]:
    """Other names a format answers to, each with the format's name (e.g. `gsm-ic` for `gsm_ic`)."""
    return {alias: fmt.name for fmt in FORMATS for alias in fmt.aliases}


def find(name: str) -> Format | None:
    """The format called `name` or answering to it, if any."""
    return next((fmt for fmt in FORMATS if name == fmt.name or name in fmt.aliases), None)
