"""The release as a Hugging Face dataset: a folder that `datasets.load_dataset(FOLDER)` loads.

Each data source gives two configs, as the ReliableMath release has two kinds of file: `unsol_{source}` (split
`unsol`), its vetted unsolvable candidates with exactly the rows and fields of the `reliablemath` export's
`unsol/{source}.json`, and `solve_{source}` (split `solve`), its solvable problems as in `solve/{source}.json`.
Each is one Parquet file (`unsol/{source}.parquet`, `solve/{source}.parquet`) with typed columns: a column keeps
its JSON type (text, whole number, number, true/false, list of text) when all its values share it (whole numbers
some written as `1.0` are whole numbers); one whose values mix types (a ground truth that is text on some rows
and a number on others) is text, each non-text value written as its JSON text, and the card names it. Sources
without rows of a kind get no config of it. The dataset card, `README.md`, is built by `card`; the audited
precision (`AuditedPrecision`) goes into it when there is one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator.import_export.exports import reliablemath
from annotator.import_export.exports.hf.card import AuditedPrecision, Config, card_facts, dataset_card
from annotator.labelling import audit

__all__ = ["AuditedPrecision", "audited_precision", "manifest", "nothing_to_write", "write_dataset"]

KINDS = ("unsol", "solve")  # the release's two kinds of file, and the split each config has
# Whole numbers a float64 column holds exactly; an int64 column holds those of 64 bits.
_EXACT_IN_FLOAT = 2**53
_INT64 = 2**63
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass
class Column:
    """One field of a config: its name, its type as `datasets` shows it, and whether its values mixed types."""

    name: str
    dtype: str
    mixed: bool = False
    values: list[Any] = field(default_factory=list, repr=False)


def _config_name(kind: str, source: str, taken: set[str]) -> str:
    """`{kind}_{source}` with any character a config name or a file name should not hold replaced, unique
    without regard to case (the folder may land on a case-insensitive file system)."""
    stem = f"{kind}_{_UNSAFE.sub('_', source).strip('_') or 'source'}"
    name, number = stem, 1
    while name.lower() in taken:
        number += 1
        name = f"{stem}_{number}"
    taken.add(name.lower())
    return name


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if -_INT64 <= value < _INT64 else "other"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "strings"
    return "other"


def _column(name: str, values: list[Any]) -> Column:
    """The column's type from its values (None allowed anywhere): see the module's docstring."""
    kinds = {_kind_of(value) for value in values} - {"null"}
    if not kinds or kinds == {"string"}:
        return Column(name, "string", values=values)
    if len(kinds) == 1 and kinds < {"bool", "int", "float", "strings"}:
        dtype = {"bool": "bool", "int": "int64", "float": "float64", "strings": "list<string>"}[kinds.pop()]
        return Column(name, dtype, values=values)
    if kinds == {"int", "float"}:
        numbers = [value for value in values if value is not None]
        if all(isinstance(value, int) or (value.is_integer() and abs(value) < _INT64) for value in numbers):
            # Whole numbers some of which a file wrote as 1.0 (the release's difficulty_eval): whole numbers.
            return Column(name, "int64", values=[None if value is None else int(value) for value in values])
        if all(abs(value) <= _EXACT_IN_FLOAT for value in numbers if isinstance(value, int)):
            return Column(name, "float64", values=[None if value is None else float(value) for value in values])
    text = [value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            for value in values]
    return Column(name, "string", mixed=True, values=text)


def columns_of(records: list[dict[str, Any]]) -> list[Column]:
    """The records' columns, in the order their keys first come (a key a record lacks is None there)."""
    names = list(dict.fromkeys(key for record in records for key in record))
    return [_column(name, [record.get(name) for record in records]) for name in names]


def _arrow_type(dtype: str) -> Any:
    import pyarrow as pa

    return {"string": pa.string(), "bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(),
            "list<string>": pa.list_(pa.string())}[dtype]


def _write_parquet(path: Path, columns: list[Column]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({column.name: pa.array(column.values, type=_arrow_type(column.dtype)) for column in columns})
    pq.write_table(table, path)


def audited_precision(session: Session) -> AuditedPrecision | None:
    """The audit's estimate of the share of vetted candidates that are truly unsolvable, with its 95% Wilson
    interval and sample, for the card; None (the card says "not audited") while the project has no audit."""
    found = audit.estimate(session, with_model=False)  # the card shows the audit's figure alone
    if found["status"] != audit.AUDITED:
        return None
    low, high = found["interval"]
    return AuditedPrecision(unsolvable=found["unsolvable"], sample=found["audited"],
                            share=found["unsolvable_share"], low=low, high=high)


def write_dataset(session: Session, out: Path, *, include_incomplete: bool = False) -> dict[str, int]:
    """Write the Parquet files and the dataset card into `out`; {file name: records}."""
    taken: set[str] = set()
    configs: list[Config] = []
    counts: dict[str, int] = {}
    for source, records in reliablemath.records_by_source(session, include_incomplete=include_incomplete):
        for kind in KINDS:  # written source by source (one source's records in memory at a time)
            if not records[kind]:
                continue
            name = _config_name(kind, source, taken)
            path = f"{kind}/{name.removeprefix(kind + '_')}.parquet"
            columns = columns_of(records[kind])
            _write_parquet(out / path, columns)
            counts[path] = len(records[kind])
            configs.append(Config(name=name, kind=kind, source=source, path=path, rows=len(records[kind]),
                                  columns=[(c.name, c.dtype, c.mixed) for c in columns]))
    configs.sort(key=lambda config: KINDS.index(config.kind))  # the unsolvable ones first, as the card lists them
    facts = card_facts(session, include_incomplete=include_incomplete)
    card = dataset_card(configs, facts, audited_precision=audited_precision(session))
    (out / "README.md").write_text(card, encoding="utf-8", newline="\n")
    counts["README.md"] = 0
    return counts


def manifest(session: Session, *, include_incomplete: bool = False) -> dict[str, Any]:
    """The release's own manifest entries (the vetted rule, label provenance): the same candidates."""
    return reliablemath.manifest(session, include_incomplete=include_incomplete)


def nothing_to_write(session: Session) -> str | None:
    return reliablemath.nothing_to_write(session)
