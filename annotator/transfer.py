"""Data in and out through the browser: uploaded files (or `.zip`s of them) unpacked into a folder, a preview
of what importing them would add, the import itself (`importer.import_parts`, as the command line does), and
an export as one `.zip` of exactly the files `python -m annotator export` writes.

Errors are the readers' one-line `InputError`s, naming each file as it was uploaded (not the temporary folder).
"""

from __future__ import annotations

import dataclasses
import io
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from annotator.formats import InputError, ReadOptions, read, registry
from annotator.records import CandidateRecord, ImportPart, ProblemRecord

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from annotator.importer import ImportSummary

PREVIEW_RECORDS = 3
# A zip bomb guard: more members or bytes than this in one upload is refused before anything is written.
MAX_ZIP_MEMBERS = 10_000
MAX_ZIP_BYTES = 2_000_000_000


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
    first: list[dict[str, Any]] = field(default_factory=list)  # the first records, as stored fields
    oddities: list[str] = field(default_factory=list)


def _safe_member(name: str) -> PurePosixPath | None:
    """A zip member's path inside the folder, or None for a folder entry or macOS metadata; raises on a path
    that would leave the folder."""
    path = PurePosixPath(name)
    if name.endswith("/") or not path.parts or path.parts[0] == "__MACOSX" or path.name.startswith("."):
        return None
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"member {name!r} points outside the archive")
    return path


def _unzip(name: str, data: bytes, into: Path) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise InputError(name, f"is not a valid .zip file ({exc})") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS or sum(m.file_size for m in members) > MAX_ZIP_BYTES:
            raise InputError(name, f"holds more than {MAX_ZIP_MEMBERS:,} files or {MAX_ZIP_BYTES:,} bytes")
        for member in members:
            try:
                path = _safe_member(member.filename)
            except ValueError as exc:
                raise InputError(name, str(exc)) from None
            if path is not None:
                target = into.joinpath(*path.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(member))


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
    from annotator.formats.reliablemath import sample_kind

    return sorted(paths, key=lambda path: path.is_file() and sample_kind(path) == "unsol")


def unpack(uploads: list[tuple[str, bytes]], *, into: Path) -> Batch:
    """Write each upload (name, bytes) into `into`: a `.zip` unpacked into a folder of its name, any other file
    as it is. Two uploads of one name are refused."""
    paths: list[Path] = []
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
            _unzip(base, data, target)
            paths.extend(_importable(target))
        else:
            target.write_bytes(data)
            paths.append(target)
    if not paths:
        raise InputError(", ".join(name for name, _ in uploads) or "the upload", "holds no files to import")
    return Batch(into, _problems_first(paths))


@contextmanager
def unpacked(uploads: list[tuple[str, bytes]]) -> Iterator[Batch]:
    """`unpack` into a temporary folder that is removed afterwards; InputErrors name files as uploaded."""
    with tempfile.TemporaryDirectory(prefix="annotator-upload-") as folder:
        root = Path(folder).resolve()
        with _named_as_uploaded(Batch(root, [])):
            yield unpack(uploads, into=root)


@contextmanager
def _named_as_uploaded(batch: Batch) -> Iterator[None]:
    try:
        yield
    except InputError as exc:
        raise InputError(
            batch.name(exc.path), exc.message.replace(f"{batch.root}/", ""), record=exc.record, field=exc.field
        ) from None


def _parts(batch: Batch, *, format: str | None, options: ReadOptions) -> list[ImportPart]:
    return [part for path in batch.paths for part in read(path, format=format, options=options)]


def _stored_fields(record: ProblemRecord | CandidateRecord) -> dict[str, Any]:
    values = dataclasses.asdict(record)
    for name in ("location", "problem", "require_problem"):
        values.pop(name, None)
    return {key: value for key, value in values.items() if value is not None}


def preview(batch: Batch, *, format: str | None = None, options: ReadOptions | None = None) -> list[FilePreview]:
    """Read and check every record of the batch, as an import would, and count what each file holds. Nothing
    is stored; an import can still fail on what only the database knows (a conflict, a missing problem)."""
    options = options or ReadOptions()
    previews = []
    for path in batch.paths:
        name = format or registry_name(path, options)
        for part in read(path, format=format, options=options):
            shown = FilePreview(batch.name(part.path), name)
            for record in part.records:
                if isinstance(record, ProblemRecord):
                    shown.problems += 1
                else:
                    shown.candidates += 1
                    shown.labels += record.label is not None
                if len(shown.first) < PREVIEW_RECORDS:
                    shown.first.append(_stored_fields(record))
            shown.oddities = [oddity.describe(count) for oddity, count in part.oddities.items()]
            previews.append(shown)
    return previews


def registry_name(path: Path, options: ReadOptions) -> str:
    """The format a path is read as: detected, or `table` when a column mapping is given (as `read` does)."""
    from annotator.formats import detect

    return "table" if options.mapping else detect(path)


def import_batch(
    batch: Batch,
    *,
    engine: Engine,
    format: str | None = None,
    options: ReadOptions | None = None,
    update: bool = False,
) -> ImportSummary:
    """Import the batch in one transaction, exactly as `python -m annotator import` does with these files."""
    from annotator.importer import import_parts

    summary = import_parts(_parts(batch, format=format, options=options or ReadOptions()), engine=engine, update=update)
    summary.files = [batch.name(path) for path in summary.files]
    return summary


def export_zip(format: str, *, engine: Engine, options: dict[str, Any] | None = None) -> bytes:
    """`python -m annotator export --format FORMAT` as one `.zip`: the same files, byte for byte, and its
    `manifest.json`, in sorted order; `options` as `exports.export` takes them (e.g. `include_incomplete`)."""
    from annotator import exports

    with tempfile.TemporaryDirectory(prefix="annotator-export-") as folder:
        out = Path(folder)
        exports.export(format, out, engine=engine, options=options)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in out.rglob("*") if p.is_file()):
                archive.write(path, path.relative_to(out).as_posix())
    return buffer.getvalue()


__all__ = ["Batch", "FilePreview", "export_zip", "import_batch", "preview", "unpack", "unpacked"]
