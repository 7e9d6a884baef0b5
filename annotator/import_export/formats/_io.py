"""Reading records from JSON, JSONL, CSV, Parquet and Excel files, each with its location for error messages.

JSONL, CSV, Parquet and Excel are streamed, so memory does not grow with the file. JSON arrays are parsed whole
(the ReliableMath files are a few MB), up to `limits.MAX_JSON_BYTES`, once: detection decodes only the first
record (`first_row`), as it reads only a JSONL file's first line. Everywhere: a UTF-8 byte order mark is
skipped, a record with a key twice and values nested deeper than `limits.JSON_DEPTH` are one-line errors.
"""

from __future__ import annotations

import codecs
import csv
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from annotator._util.csv_cells import restore
from annotator.import_export.records import InputError, Location
from annotator.settings import limits

Row = tuple[Location, dict[str, Any]]


BOM = b"\xef\xbb\xbf"


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # only then look for the key
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return obj


# One decoder for all lines: json.loads(..., parse_constant=...) would build a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_object)


def _loads(text: str) -> Any:
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise ValueError(f"values are nested deeper than {limits.JSON_DEPTH} levels") from None


def too_deep(value: Any, limit: int = limits.JSON_DEPTH) -> bool:
    """Whether arrays and objects in `value` nest deeper than `limit` levels (`value` itself is level 1)."""
    # Level by level, each in one comprehension: a whole file's records are walked in a fraction of the time a
    # stack of (item, depth) pairs takes.
    level, depth = [value], 1
    while level:
        if depth > limit:
            return True
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (dict, list))]
        depth += 1
    return False


def _checked(value: Any, loc: Location) -> Any:
    if isinstance(value, (dict, list)) and too_deep(value):
        raise loc.error(f"values are nested deeper than {limits.JSON_DEPTH} levels")
    return value


def load_value(text: str, loc: Location, field: str) -> Any:
    """One JSON value held in a field (e.g. a CSV cell), with the checks a file gets."""
    try:
        return _checked(_loads(text), loc)
    except (TypeError, ValueError) as exc:  # DuplicateKey is a ValueError
        raise loc.error(f"invalid JSON: {exc}", field) from None


def read_text(path: Path) -> str:
    """A file read whole as UTF-8 (without a byte order mark); refused above `limits.MAX_JSON_BYTES`."""
    size = path.stat().st_size
    if size > limits.MAX_JSON_BYTES:
        raise InputError(str(path), f"is {size:,} bytes; a file read whole may be at most {limits.MAX_JSON_BYTES:,} "
                         "bytes (split it, or use JSONL, which is streamed)")
    data = path.read_bytes().removeprefix(BOM)
    if not data.strip():
        raise InputError(str(path), "the file is empty")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(str(path), f"is not valid UTF-8 (byte {exc.start}, line {line})") from None


def load_json(path: Path) -> Any:
    text = read_text(path)
    try:
        return _loads(text)
    except DuplicateKey as exc:
        index = _record_with_duplicate(text)
        raise InputError(str(path), f"the key {exc.key!r} appears twice", field=exc.key,
                         record=None if index is None else f"record {index + 1}") from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise InputError(str(path), f"invalid JSON: {exc}") from None


def _record_with_duplicate(text: str) -> int | None:
    """Which record of a JSON array holds a key twice (only read again once that is known to happen)."""
    position, index = text.find("[") + 1, 0
    if position == 0:
        return None
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        try:
            _obj, position = _DECODER.raw_decode(text, position)
        except DuplicateKey:
            return index
        except ValueError:
            return None
        index += 1


def json_array_rows(path: Path, data: Any | None = None) -> Iterator[Row]:
    """Rows of a JSON file holding an array of objects."""
    data = load_json(path) if data is None else data
    if not isinstance(data, list):
        raise InputError(str(path), f"expected a JSON array of records, got {type(data).__name__}")
    if not data:
        raise InputError(str(path), "the file holds no records")
    # Level 1 is the array, so a record may nest JSON_DEPTH levels. Looked for over the whole array at once;
    # record by record (to name the first too deep) only when one is.
    deep = too_deep(data, limits.JSON_DEPTH + 1)
    name = str(path)
    for number, obj in enumerate(data, start=1):
        loc = Location(name, f"record {number}")
        if not isinstance(obj, dict):
            raise loc.error(f"expected an object, got {type(obj).__name__}")
        yield loc, _checked(obj, loc) if deep else obj


def jsonl_rows(path: Path) -> Iterator[Row]:
    seen_any = False
    with path.open("rb") as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(limits.MAX_LINE_BYTES + 1), b""), start=1):
            loc = Location(str(path), f"line {number}")
            if len(raw) > limits.MAX_LINE_BYTES:
                raise loc.error(f"is longer than {limits.MAX_LINE_BYTES:,} bytes")
            obj = _jsonl_object(raw.removeprefix(BOM) if number == 1 else raw, loc)
            if obj is None:
                continue
            seen_any = True
            yield loc, obj
    if not seen_any:
        raise InputError(str(path), "the file is empty")


def _jsonl_object(raw: bytes, loc: Location) -> dict[str, Any] | None:
    """One JSONL line's object; None for a blank line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise loc.error(f"is not valid UTF-8 (byte {exc.start} of the line)") from None
    if not line.strip():
        return None
    try:
        obj = _loads(line)
    except DuplicateKey as exc:
        raise loc.error(f"the key {exc.key!r} appears twice", exc.key) from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise loc.error(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise loc.error(f"expected a JSON object, got {type(obj).__name__}")
    return _checked(obj, loc)


def csv_rows(path: Path) -> Iterator[Row]:
    """The rows of a CSV file as {header: value}, located by the row number a spreadsheet shows (the header is
    row 1; a cell over several lines is one row); empty rows are left out."""
    seen_any = False
    # utf-8-sig: a byte order mark (Excel writes one) is not part of the first column's name.
    with path.open(newline="", encoding="utf-8-sig") as handle:
        try:
            reader = csv.reader(handle)
            header = next(reader, [])
            for number, cells in enumerate(reader, start=2):
                if not cells:
                    continue
                loc = Location(str(path), f"row {number}")
                if len(cells) > len(header):
                    raise loc.error("has more cells than the header has columns")
                seen_any = True
                # Undo the `'` our CSV exports put before text a spreadsheet would run as a formula; a short row's
                # missing cells are None, as csv.DictReader gives them.
                cells += [None] * (len(header) - len(cells))  # type: ignore[list-item]
                yield loc, {key: restore(value) for key, value in zip(header, cells, strict=True)}
        except UnicodeDecodeError as exc:
            raise InputError(str(path), f"is not valid UTF-8 ({exc.reason} at byte {exc.start} of a block)") from None
        except csv.Error as exc:
            raise InputError(str(path), f"invalid CSV: {exc}") from None
    if not seen_any:
        raise InputError(str(path), "the file is empty")


def parquet_rows(path: Path) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise InputError(str(path), f"invalid Parquet file: {exc}") from None
    number = 0
    for chunk in parquet.iter_batches(batch_size=2048):
        for obj in chunk.to_pylist():
            number += 1  # from 1, as every reader counts
            yield Location(str(path), f"row {number}"), obj
    if number == 0:
        raise InputError(str(path), "the file is empty")


def open_xlsx(path: Path) -> Any:
    """An Excel workbook opened for reading (streamed: memory does not grow with the sheet)."""
    from openpyxl import load_workbook  # only Excel files need it

    try:
        return load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl and zipfile raise several types for a broken file
        raise InputError(str(path), f"invalid Excel file: {exc}") from None


def xlsx_rows(path: Path, workbook: Any = None) -> Iterator[Row]:
    """The rows of an Excel file's first sheet as {header: value}, located by the row number a spreadsheet
    shows (the header is row 1); empty rows are left out."""
    workbook = workbook if workbook is not None else open_xlsx(path)
    try:
        cells = workbook.worksheets[0].iter_rows(values_only=True)
        header = next(cells, None)
        names = [str(name).strip() if name is not None else None for name in header or ()]
        seen_any = False
        for number, values in enumerate(cells, start=2):
            # A cell holding only spaces is as empty as a blank one.
            obj = {
                name: value
                for name, value in zip(names, values)
                if name and value is not None and not (isinstance(value, str) and not value.strip())
            }
            if obj:
                seen_any = True
                yield Location(str(path), f"row {number}"), obj
    finally:
        workbook.close()
    if not seen_any:
        raise InputError(str(path), "the sheet holds no rows below its header")


def rows(path: Path) -> Iterator[Row]:
    """Rows of any supported table file, chosen by its extension."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return json_array_rows(path)
    if suffix == ".jsonl":
        return jsonl_rows(path)
    if suffix == ".csv":
        return csv_rows(path)
    if suffix == ".parquet":
        return parquet_rows(path)
    if suffix == ".xlsx":
        return xlsx_rows(path)
    raise InputError(str(path), f"unsupported file type {suffix!r} (expected .json, .jsonl, .csv, .parquet or .xlsx)")


# First records read during one detection, by path: every format's `sniff` looks at the same record, and
# reading it can mean reading a whole file (a JSON array's text, or a broken file whole).
_samples: ContextVar[dict[Path, dict[str, Any] | None] | None] = ContextVar("samples", default=None)


@contextmanager
def sampling() -> Iterator[None]:
    """Within this block, `first_row` reads each file once."""
    token = _samples.set({})
    try:
        yield
    finally:
        _samples.reset(token)


def first_row(path: Path) -> dict[str, Any] | None:
    """The first record of a file, for format detection; None if it cannot be read (the reader says why)."""
    if not path.is_file():
        return None
    samples = _samples.get()
    if samples is None:
        return _first_row(path)
    if path not in samples:
        samples[path] = _first_row(path)
    return samples[path]


def _first_row(path: Path) -> dict[str, Any] | None:
    if path.suffix.lower() == ".json" and (found := _first_json_object(path)) is not None:
        return found
    try:
        for _loc, obj in rows(path):
            return obj
    except InputError:
        return None
    return None


# A JSON array's opening bracket, with the whitespace JSON allows around it.
_ARRAY_START = re.compile(r"[ \t\n\r]*\[[ \t\n\r]*")


def _first_json_object(path: Path) -> dict[str, Any] | None:
    """The first record of a JSON array file, decoded alone: detection needs no more, and the format's reader
    parses and checks the whole file (as it does a JSONL file's other lines), so a file is not parsed twice.
    None when the file does not start with an object in an array: then it is read whole, for its error."""
    try:
        head, whole = _head_text(path)
        try:
            obj = _first_value(head)
        except json.JSONDecodeError:
            if whole:
                raise
            obj = None
        if obj is None and not whole:  # the head may end within the first record: the whole file, as read
            obj = _first_value(read_text(path))
    except (ValueError, RecursionError):  # InputError and DuplicateKey are ValueErrors
        return None
    return obj if isinstance(obj, dict) and not too_deep(obj) else None


def _first_value(text: str) -> Any:
    """The first value of the JSON array `text` starts, None if it starts none."""
    start = _ARRAY_START.match(text)
    return None if start is None else _DECODER.raw_decode(text, start.end())[0]


_HEAD_BYTES = 1 << 16  # what detection reads of a JSON file first, the first record being a small part of it


def _head_text(path: Path) -> tuple[str, bool]:
    """The start of a file as `read_text` would decode it (a character cut at its end left out), and whether that
    is the whole file: the reader reads the whole file, so detection need not. Refused as `read_text` refuses it."""
    size = path.stat().st_size
    if size > limits.MAX_JSON_BYTES:
        raise ValueError(f"{size:,} bytes")
    with path.open("rb") as handle:
        head = handle.read(_HEAD_BYTES)
    whole = len(head) < _HEAD_BYTES or size <= _HEAD_BYTES
    head = head.removeprefix(BOM)
    if whole and not head.strip():
        raise ValueError("the file is empty")
    return codecs.getincrementaldecoder("utf-8")().decode(head, final=whole), whole


def json_style(path: Path, text: str, data: Any) -> dict[str, Any]:
    """How a JSON or JSONL file of records was serialised, so that an export can write it back byte for byte
    (`annotator.import_export.exports.umwp.dumps_file` reads these keys: jsonl, indent, ensure_ascii, final_newline)."""
    if path.suffix.lower() == ".jsonl":
        return {"jsonl": True, "ensure_ascii": text.isascii()}
    for indent in (None, 2, 4):
        for ensure_ascii in (False, True):
            if json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) in (text, text.rstrip("\n")):
                return {
                    "jsonl": False,
                    "indent": indent,
                    "ensure_ascii": ensure_ascii,
                    "final_newline": text.endswith("\n"),
                }
    return {"jsonl": False, "indent": 2, "ensure_ascii": False, "final_newline": True}
