"""Data in and out through the browser: uploaded files (or `.zip`s of them) unpacked into a folder, a preview
of what importing them would add, the import itself (`importer.import_parts`, as the command line does), and
an export as one `.zip` of exactly the files `python -m annotator export` writes.

Errors are the readers' one-line `InputError`s, naming each file as it was uploaded (not the temporary folder).

What one upload may cost is bounded (`annotator.settings.limits`): uncompressed bytes and entries across all its files
and archives, folder depth and name length inside an archive, the compression ratio of a large member. An
archive is checked whole (names, kinds, conflicts, sizes) before anything is written, then written in chunks
counted against the budget (a member's header cannot lie about its size: zipfile stops at the stated size and
checks the CRC). Temporary folders live in one directory (`ANNOTATOR_TMP_DIR`, default
`$TMPDIR/annotator-uploads`), named `upload-PID-...` / `export-PID-...`; the first use in a process removes those
of processes that are gone (a server killed mid-import) and any older than a day.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import stat
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from annotator.import_export.formats import InputError, InputErrors, ReadOptions, read, read_all, registry
from annotator.import_export.records import CandidateRecord, ImportPart, ProblemRecord, TranscriptRecord
from annotator.settings import limits

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlmodel import Session

    from annotator.import_export.importer import ImportSummary

PREVIEW_RECORDS = 3
CHUNK = 1 << 20
STALE_SECONDS = 24 * 3600
_TEMPORARY = re.compile(r"^(upload|export)-(\d+)-")
_cleaned: set[Path] = set()  # the temporary roots this process has cleaned already


def temporary_root() -> Path:
    """The one directory every temporary upload and export folder lives in."""
    root = Path(os.environ.get("ANNOTATOR_TMP_DIR") or Path(tempfile.gettempdir()) / "annotator-uploads")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def clean_stale(root: Path | None = None) -> list[Path]:
    """Remove the temporary folders left by processes that are gone (or older than a day); returns them."""
    root = root or temporary_root()
    removed = []
    for folder in root.iterdir() if root.is_dir() else ():
        match = _TEMPORARY.match(folder.name)
        if not match or not folder.is_dir():
            continue  # not ours
        pid = int(match[2])
        try:
            old = time.time() - folder.stat().st_mtime > STALE_SECONDS
        except FileNotFoundError:
            continue  # removed meanwhile
        if old or (pid != os.getpid() and not _alive(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextmanager
def _temporary(kind: str) -> Iterator[Path]:
    """A fresh folder `KIND-PID-...` in the temporary root, removed afterwards (or, if this process dies, by the
    next one's `clean_stale`)."""
    root = temporary_root()
    if root not in _cleaned:
        _cleaned.add(root)
        clean_stale(root)
    with tempfile.TemporaryDirectory(prefix=f"{kind}-{os.getpid()}-", dir=root) as folder:
        yield Path(folder).resolve()


@dataclass
class _Budget:
    """One upload's allowance, across all its files and archives, and what it has used."""

    max_bytes: int
    max_entries: int
    bytes: int = 0
    entries: int = 0

    def take(self, name: str, *, size: int = 0, entries: int = 0) -> None:
        self.bytes += size
        self.entries += entries
        if self.entries > self.max_entries:
            raise InputError(name, f"makes the upload hold more than {self.max_entries:,} files and folders")
        if self.bytes > self.max_bytes:
            raise InputError(name, f"makes the upload larger than {self.max_bytes:,} bytes unpacked")


@dataclass
class Batch:
    """Uploaded files unpacked into `root`; `paths` are what to import, in import order."""

    root: Path
    paths: list[Path]

    def name(self, path: Path | str) -> str:
        """A path as the user knows it: relative to the upload folder."""
        text = str(path)
        prefix = f"{self.root}/"
        return text[len(prefix) :] if text.startswith(prefix) else text


@dataclass
class FilePreview:
    """What one file of a batch would add, before anything is stored."""

    file: str
    format: str
    problems: int = 0
    candidates: int = 0
    labels: int = 0
    transcripts: int = 0
    first: list[dict[str, Any]] = field(default_factory=list)  # the first records, as stored fields
    oddities: list[str] = field(default_factory=list)
    repeats: list[str] = field(default_factory=list)  # files of its folder whose records this one holds again
    kept_whole: bool = False  # a file of no records the import keeps as it is (a release's math_instruction.json)

    @property
    def note(self) -> str:
        """What the preview says of the file besides its counts."""
        if self.repeats:
            return f"repeats {', '.join(self.repeats)} (counted once)"
        return "no records: kept as it is, and exported again" if self.kept_whole else ""


def totals(previews: list[FilePreview]) -> dict[str, int]:
    """Problems, candidates, labels and transcripts of a batch, each counted once (a file that `repeats` others
    counts not)."""
    counted = [shown for shown in previews if not shown.repeats]
    keys = ("problems", "candidates", "labels", "transcripts")
    return {key: sum(getattr(shown, key) for shown in counted) for key in keys}


def _safe_member(member: zipfile.ZipInfo) -> PurePosixPath | None:
    """A zip member's path inside the folder, or None for a folder entry or macOS metadata; raises ValueError
    for a name or kind we do not unpack."""
    name = member.filename
    shown = repr(name if len(name) <= 80 else name[:77] + "...")
    if len(name) > limits.UPLOAD_NAME_CHARS:
        raise ValueError(f"member {shown} has a name of {len(name):,} characters (at most {limits.UPLOAD_NAME_CHARS})")
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", name):
        raise ValueError(f"member {shown} points outside the archive")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise ValueError(f"member {shown} is a symbolic link")
    if len(path.parts) - 1 > limits.UPLOAD_DEPTH:
        raise ValueError(f"member {shown} is nested {len(path.parts) - 1} folders deep (at most {limits.UPLOAD_DEPTH})")
    if member.is_dir() or not path.parts or path.parts[0] == "__MACOSX" or path.name.startswith("."):
        return None
    ratio = member.file_size / max(member.compress_size, 1)
    if member.file_size > limits.UPLOAD_RATIO_FROM and ratio > limits.UPLOAD_RATIO:
        raise ValueError(f"member {shown} unpacks {ratio:,.0f} times its packed size (at most "
                         f"{limits.UPLOAD_RATIO} for members over {limits.UPLOAD_RATIO_FROM:,} bytes): a zip bomb?")
    return path


def _planned(name: str, archive: zipfile.ZipFile, budget: _Budget) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The members to write, every one checked before anything is written."""
    members = archive.infolist()
    budget.take(name, entries=len(members), size=sum(m.file_size for m in members))
    files: set[PurePosixPath] = set()
    folders: set[PurePosixPath] = set()
    planned = []
    for member in members:
        try:
            path = _safe_member(member)
        except ValueError as exc:
            raise InputError(name, str(exc)) from None
        if path is None:
            continue
        if problem := _conflict(path, files, folders):
            raise InputError(name, f"member {member.filename!r} {problem}")
        files.add(path)
        folders.update(path.parents)
        planned.append((member, path))
    return planned


def _conflict(path: PurePosixPath, files: set[PurePosixPath], folders: set[PurePosixPath]) -> str | None:
    """Why `path` cannot be written beside the members before it (`a` and `a/b.json`), or None."""
    if path in files:
        return "appears twice"
    if path in folders:
        return "is a file and a folder of other members"
    inside = next((parent for parent in path.parents if parent in files), None)
    return None if inside is None else f"is inside {str(inside)!r}, which is a file"


def _unzip(name: str, data: bytes, into: Path, budget: _Budget) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise InputError(name, f"is not a valid .zip file ({exc})") from None
    with archive:
        for member, path in _planned(name, archive, budget):
            target = into.joinpath(*path.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                _extract(archive, member, target)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
                raise InputError(name, f"member {member.filename!r} cannot be unpacked: {exc}") from None


def _extract(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path) -> None:
    """Copy one member in chunks (a bad CRC raises BadZipFile at its end)."""
    with archive.open(member) as source, target.open("wb") as sink:
        while chunk := source.read(CHUNK):
            sink.write(chunk)


def _lift_namesake(folder: Path) -> None:
    """A zip `X.zip` of one folder `X` (a folder zipped as it is) unpacked into `X/` holds `X/X/...`: its content
    moves up a level, so that its files are named `X/solve.json`, not `X/X/solve.json`."""
    entries = list(folder.iterdir())
    if len(entries) != 1 or not entries[0].is_dir() or entries[0].name.lower() != folder.name.lower():
        return
    inner = entries[0].rename(folder / f"{entries[0].name}.unpacking")  # its own children may be named X too
    for child in list(inner.iterdir()):
        child.rename(folder / child.name)
    inner.rmdir()


def _importable(folder: Path) -> list[Path]:
    """What to import from an unpacked zip: the folder itself when a format reads it whole (a ReliableMath
    release, TreeCut files), else every file in it, by path."""
    entries = [p for p in folder.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        folder = entries[0]  # a zip of one folder
    if any(fmt.sniff(folder) for fmt in registry().values()):
        return [folder]
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _problems_first(paths: list[Path]) -> list[Path]:
    """Files of problems before files of candidates that name them (ReliableMath's solve before unsol),
    otherwise in the order given."""
    from annotator.import_export.formats.reliablemath import sample_kind

    return sorted(paths, key=lambda path: path.is_file() and sample_kind(path) == "unsol")


def unpack(
    uploads: list[tuple[str, bytes]],
    *,
    into: Path,
    max_bytes: int = limits.UPLOAD_BYTES,
    max_entries: int = limits.UPLOAD_ENTRIES,
) -> Batch:
    """Write each upload (name, bytes) into `into`: a `.zip` unpacked into a folder of its name, any other file
    as it is. Two uploads of one name are refused, and so is an upload over `max_bytes` unpacked or
    `max_entries` files and folders, all its files and archives together."""
    paths: list[Path] = []
    budget = _Budget(max_bytes, max_entries)
    for name, data in uploads:
        base = PurePosixPath(name.replace("\\", "/")).name
        if not base or base.startswith("."):
            raise InputError(name, "is not a file name to import")
        target = into / (base[: -len(".zip")] if base.lower().endswith(".zip") else base)
        if target.exists():
            raise InputError(
                base, "was uploaded twice (two files or archives of one name); upload files of one name in a .zip "
                "with their folders, e.g. a ReliableMath release's solve/ and unsol/"
            )
        if base.lower().endswith(".zip"):
            target.mkdir()
            budget.take(base, entries=1)
            _unzip(base, data, target, budget)
            _lift_namesake(target)
            paths.extend(_importable(target))
        else:
            budget.take(base, entries=1, size=len(data))
            target.write_bytes(data)
            paths.append(target)
    if not paths:
        raise InputError(", ".join(name for name, _ in uploads) or "the upload", "holds no files to import")
    return Batch(into, _problems_first(paths))


@contextmanager
def unpacked(uploads: list[tuple[str, bytes]]) -> Iterator[Batch]:
    """`unpack` into a temporary folder that is removed afterwards; InputErrors name files as uploaded."""
    with _temporary("upload") as root:
        with _named_as_uploaded(Batch(root, [])):
            yield unpack(uploads, into=root)


@contextmanager
def _named_as_uploaded(batch: Batch) -> Iterator[None]:
    try:
        yield
    except InputError as exc:
        errors = exc.errors if isinstance(exc, InputErrors) else [exc]
        raise InputErrors.of([
            InputError(batch.name(e.path), e.message.replace(f"{batch.root}/", ""), record=e.record, field=e.field)
            for e in errors
        ]) from None


def _stored_fields(record: ProblemRecord | CandidateRecord | TranscriptRecord) -> dict[str, Any]:
    values = dataclasses.asdict(record)
    for name in ("location", "problem", "require_problem"):
        values.pop(name, None)
    return {key: value for key, value in values.items() if value is not None}


def preview(batch: Batch, *, format: str | None = None, options: ReadOptions | None = None) -> list[FilePreview]:
    """Read and check every record of the batch, as an import would, and count what each file holds. Nothing
    is stored; an import can still fail on what only the database knows (a conflict, a missing problem)."""
    options = options or ReadOptions()
    previews: list[FilePreview] = []
    errors: list[InputError] = []  # every bad file is told, not only the first
    for path in batch.paths:
        try:
            name, parts = format or registry_name(path, options), read(path, format=format, options=options)
        except InputError as exc:
            errors.append(exc)
            continue
        for part in parts:
            try:
                previews.append(_preview(batch, part, name))
            except InputError as exc:
                errors.append(exc)
    if errors:
        raise InputErrors.of(errors)
    return previews


def _preview(batch: Batch, part: ImportPart, name: str) -> FilePreview:
    shown = FilePreview(batch.name(part.path), name)
    for record in part.records:
        if isinstance(record, ProblemRecord):
            shown.problems += 1
        elif isinstance(record, TranscriptRecord):
            shown.transcripts += 1
        else:
            shown.candidates += 1
            shown.labels += record.label is not None
        if len(shown.first) < PREVIEW_RECORDS:
            shown.first.append(_stored_fields(record))
    shown.oddities = [oddity.describe(count) for oddity, count in part.oddities.items()]
    shown.repeats = list(part.repeats)
    shown.kept_whole = part.source_file is not None and not (shown.problems or shown.candidates or shown.transcripts)
    return shown


def registry_name(path: Path, options: ReadOptions) -> str:
    """The format a path is read as: detected, or `table` when a column mapping is given (as `read` does)."""
    from annotator.import_export.formats import detect

    return "table" if options.mapping else detect(path)


def import_batch(
    batch: Batch,
    *,
    engine: Engine,
    format: str | None = None,
    options: ReadOptions | None = None,
    update: bool = False,
    authorize: Callable[[Session], None] | None = None,
) -> ImportSummary:
    """Import the batch in one transaction, exactly as `python -m annotator import` does with these files;
    `authorize` runs first in that transaction (the page's check that its admin may still write)."""
    from annotator.import_export.importer import import_parts

    parts = read_all(batch.paths, format=format, options=options or ReadOptions())
    summary = import_parts(parts, engine=engine, update=update, authorize=authorize)
    summary.files = [batch.name(path) for path in summary.files]
    return summary


def export_zip(format: str, *, engine: Engine, options: dict[str, Any] | None = None) -> bytes:
    """`python -m annotator export --format FORMAT` as one `.zip`: the same files, byte for byte, and its
    `manifest.json`, in sorted order; `options` as `exports.export` takes them (e.g. `include_incomplete`)."""
    from annotator.import_export import exports

    with _temporary("export") as out:
        exports.export(format, out, engine=engine, options=options)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in out.rglob("*") if p.is_file()):
                archive.write(path, path.relative_to(out).as_posix())
    return buffer.getvalue()


__all__ = ["Batch", "FilePreview", "clean_stale", "export_zip", "import_batch", "preview", "temporary_root", "totals",
           "unpack", "unpacked"]
