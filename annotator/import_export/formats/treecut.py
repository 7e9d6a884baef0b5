"""TreeCut JSONL files (`{"problem", "answer", "proof"}`), read so that `annotator.import_export.exports.treecut` can
write them back byte for byte.

The generation parameters are only in the file name
(`qa_theme-food_compositeName_True_numVars-4_ansDepth-2_order-random_hallu-True_cutDepth-1_REP-500.jsonl`).
Every record goes through the exact check (`annotator.construction.treecut`); records whose stated answer disagrees are
all reported by line and nothing is imported.

How records become problems and candidates:
- an answerable file (`hallu-False`): one problem per record (answer as ground truth, proof as solution);
- an unanswerable file (`hallu-True`) whose sibling answerable file sits in the same directory and pairs
  with it line by line (each unanswerable problem is its answerable problem minus one condition; files
  written by `python -m annotator treecut` do): a `remove` candidate of that problem per record;
- an unanswerable file without such a sibling (the reference generator's files are independent
  samples): each record becomes a candidate of a problem holding the same text and no ground truth,
  marked `{"treecut": {"answerable": false}}` in its extra, since no answerable original exists.

Each file gets its own data source, `treecut-nv{numVars}-ad{ansDepth}-{8 hex digits of the answerable
file's sha256}` (unpaired unanswerable files add `-cut{cutDepth}`), so re-importing a file is a no-op and two
generated files never collide.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator._util.files import sha256_bytes
from annotator.construction import treecut
from annotator.database.vocabulary import DataId, RewriteType
from annotator.import_export.formats import _io
from annotator.import_export.formats.reliablemath import is_release_dir
from annotator.import_export.records import (
    CandidateRecord,
    ImportPart,
    InputError,
    Location,
    ProblemRecord,
    ReadOptions,
    SourceFileInfo,
    require,
    require_str,
)

NAME = "treecut"
KEYS = ("problem", "answer", "proof")
MAX_REPORTED = 20


def is_treecut_record(sample: dict[str, Any]) -> bool:
    return set(KEYS) <= set(sample)


def is_treecut_dir(path: Path) -> bool:
    return path.is_dir() and any(treecut.parse_file_name(p.name) for p in path.glob("*.jsonl"))


def sniff(path: Path) -> bool:
    """TreeCut-named JSONL files in a directory, or a file whose first record has problem, answer and proof.

    A directory that is also a ReliableMath release is the release's (it always was).
    """
    if path.is_dir():
        return is_treecut_dir(path) and not is_release_dir(path)
    sample = _io.first_row(path)
    return sample is not None and is_treecut_record(sample)


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    return read_path(path)


def read_path(path: Path, *, provenance: dict[str, Any] | None = None) -> list[ImportPart]:
    """A TreeCut file, or every TreeCut-named file of a directory (answerable files first)."""
    if path.is_dir():
        files = sorted((p for p in path.glob("*.jsonl") if treecut.parse_file_name(p.name)), key=_file_order)
        return [read_file(p, provenance=provenance) for p in files]
    return [read_file(path, provenance=provenance)]


def _file_order(path: Path) -> tuple[bool, str]:
    params = treecut.parse_file_name(path.name) or {}
    return bool(params.get("hallu")), path.name


class _Record:
    """One parsed line: its JSON object, location, raw text (if not reproducible) and the check's verdict."""

    __slots__ = ("index", "line", "loc", "obj", "raw", "verdict", "sentences", "question")

    def __init__(self, index: int, line: int, loc: Location, obj: dict[str, Any], raw: str | None) -> None:
        self.index, self.line, self.loc, self.obj, self.raw = index, line, loc, obj, raw
        self.verdict: treecut.Verdict | None = None
        self.sentences: list[str] = []
        self.question = ""


class _File:
    """A TreeCut file read, validated and checked."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.params = treecut.parse_file_name(path.name) or {}
        self.theme = self.params.get("theme", "food")
        if self.theme not in treecut.THEMES:
            raise InputError(
                str(path), f"unknown theme {self.theme!r} in the file name; known: {', '.join(treecut.THEMES)}"
            )
        data = path.read_bytes()
        self.sha256 = sha256_bytes(data)
        text = _io.read_text(path)
        self.ensure_ascii = text.isascii()
        self.final_newline = text.endswith("\n")
        lines = text.split("\n")
        if self.final_newline:
            lines.pop()
        self.blank_lines = [number for number, line in enumerate(lines, start=1) if not line.strip()]
        self.blank_text = {number: lines[number - 1] for number in self.blank_lines}
        self.records: list[_Record] = []
        for index, (loc, obj) in enumerate(_io.jsonl_rows(path)):
            line = int(loc.record.split()[-1])
            for key in KEYS:
                require_str(require(obj, key, loc), loc, key)
            raw = lines[line - 1]
            self.records.append(
                _Record(index, line, loc, obj, None if dumps(obj_in_order(obj), self.ensure_ascii) == raw else raw)
            )
        answers = {record.obj["answer"].strip().lower() == "unknown" for record in self.records}
        if "hallu" in self.params:
            self.unanswerable = bool(self.params["hallu"])
        else:
            self.unanswerable = answers == {True}
        self._check()

    def _check(self) -> None:
        disagreements: list[tuple[_Record, str]] = []
        for record in self.records:
            try:
                parsed = treecut.parse_problem(record.obj["problem"], theme=self.theme)
            except treecut.TreeCutParseError as exc:
                raise record.loc.error(f"not a TreeCut problem: {exc}", "problem") from None
            record.sentences, record.question = parsed.sentences, parsed.question
            record.verdict = treecut.solve(parsed.equations, parsed.question)
            stated = record.obj["answer"]
            if (stated.strip().lower() == "unknown") != self.unanswerable:
                kind = "unanswerable" if self.unanswerable else "answerable"
                raise record.loc.error(f"states {stated!r} in a file of {kind} problems", "answer")
            if not treecut.answer_agrees(record.verdict, stated):
                disagreements.append((record, stated))
        if disagreements:
            shown = "; ".join(
                f"{r.loc.record}: states {stated!r}, the exact check says {r.verdict.label if r.verdict else '?'}"
                for r, stated in disagreements[:MAX_REPORTED]
            )
            more = f" (and {len(disagreements) - MAX_REPORTED} more)" if len(disagreements) > MAX_REPORTED else ""
            if len(disagreements) == 1:
                record, stated = disagreements[0]
                raise record.loc.error(
                    f"states {stated!r}, but the exact check says {record.verdict.label if record.verdict else '?'}",
                    "answer",
                )
            raise InputError(
                str(self.path), f"{len(disagreements)} records disagree with the exact check: {shown}{more}"
            )

    def tag(self) -> str:
        if "numVars" in self.params:
            return f"nv{self.params['numVars']}-ad{self.params['ansDepth']}"
        return "file"

    def options(self, data_source: str) -> dict[str, Any]:
        options: dict[str, Any] = {
            "data_source": data_source,
            "ensure_ascii": self.ensure_ascii,
            "final_newline": self.final_newline,
            "params": self.params,
        }
        if self.blank_lines:
            options["blank_lines"] = self.blank_text
        return options


def obj_in_order(obj: dict[str, Any]) -> dict[str, Any]:
    return {key: obj[key] for key in KEYS} | {key: value for key, value in obj.items() if key not in KEYS}


def dumps(obj: dict[str, Any], ensure_ascii: bool) -> str:
    return json.dumps(obj, ensure_ascii=ensure_ascii)


def _sibling(path: Path, params: dict[str, Any]) -> Path | None:
    if not params.get("hallu") or params.get("cutDepth") is None:
        return None
    name = path.name.replace(f"_hallu-True_cutDepth-{params['cutDepth']}_", "_hallu-False_")
    sibling = path.with_name(name)
    return sibling if sibling.is_file() else None


def _pairs(answerable: _File, unanswerable: _File) -> list[int] | None:
    """For each unanswerable record, the index of the answerable condition it lacks; None if they do not pair."""
    if len(answerable.records) != len(unanswerable.records):
        return None
    missing: list[int] = []
    for full, cut in zip(answerable.records, unanswerable.records, strict=True):
        sentences, fewer = full.sentences, cut.sentences
        if full.question != cut.question or len(fewer) != len(sentences) - 1:
            return None
        index = next((i for i, (a, b) in enumerate(zip(sentences, fewer, strict=False)) if a != b), len(fewer))
        if sentences[:index] + sentences[index + 1 :] != fewer:
            return None
        missing.append(index)
    return missing


def _generation(sibling: _File | None) -> dict[str, Any]:
    """The seed, count and coefficient mode noted beside files written by `python -m annotator treecut`, if any."""
    if sibling is None:
        return {}
    meta_path = treecut.generation_file(sibling.path)
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict):
        return {}
    kept = {key: meta[key] for key in ("seed", "count") if isinstance(meta.get(key), int)}
    if isinstance(meta.get("coefficients"), str):
        kept["coefficients"] = meta["coefficients"]
    return kept


def _problem(file: _File, record: _Record, data_source: str, loc: Location | None = None) -> ProblemRecord:
    assert record.verdict is not None
    info: dict[str, Any] = {"file": file.path.name, "line": record.line}
    if record.raw is not None:
        info["raw"] = record.raw
    return ProblemRecord(
        data_source=data_source,
        position=record.index,
        question=record.obj["problem"],
        ground_truth=record.obj["answer"],
        solution=record.obj["proof"],
        extra={"treecut": info, "checks": [record.verdict.as_check()]},
        location=loc or record.loc,
    )


def read_file(path: Path, *, provenance: dict[str, Any] | None = None) -> ImportPart:
    file = _File(path)
    if not file.unanswerable:
        data_source = f"treecut-{file.tag()}-{file.sha256[:8]}"
        info = SourceFileInfo(NAME, path.name, "answerable", file.sha256, file.options(data_source))
        return ImportPart(str(path), (_problem(file, r, data_source) for r in file.records), info)

    sibling_path = _sibling(path, file.params)
    sibling = _File(sibling_path) if sibling_path is not None else None
    missing = _pairs(sibling, file) if sibling is not None else None
    if sibling is not None and missing is not None:
        data_source = f"treecut-{sibling.tag()}-{sibling.sha256[:8]}"
    else:
        data_source = f"treecut-{file.tag()}-cut{file.params.get('cutDepth', 'x')}-{file.sha256[:8]}"
    info = SourceFileInfo(NAME, path.name, "unanswerable", file.sha256, file.options(data_source))

    def records() -> Iterator[ProblemRecord | CandidateRecord]:
        base = (
            {"generator": "treecut", "params": file.params, "file": path.name}
            | _generation(sibling)
            | (provenance or {})
        )
        for record in file.records:
            assert record.verdict is not None
            treecut_info: dict[str, Any] = {
                "file": path.name,
                "answer": record.obj["answer"],
                "proof": record.obj["proof"],
                "line": record.line,
            }
            if record.raw is not None:
                treecut_info["raw"] = record.raw
            checks = [record.verdict.as_check()]
            if sibling is not None and missing is not None:
                original = sibling.records[record.index]
                # The counterpart comes along, located in this file so that importing both files is a no-op.
                yield _problem(
                    sibling, original, data_source, Location(str(path), f"{record.loc.record} (answerable counterpart)")
                )
                cut = original.sentences[missing[record.index]]
                k = missing[record.index] + 1
                yield CandidateRecord(
                    data_id=str(DataId(data_source, record.index, RewriteType.remove, k)),
                    data_source=data_source,
                    problem_position=record.index,
                    rewrite_type=RewriteType.remove,
                    condition_index=k,
                    extracted_condition=cut,
                    rewritten_condition=cut,
                    rewritten_question=record.obj["problem"],
                    unsolvable_reason=treecut.unsolvable_reason(record.verdict, cut_sentence=cut),
                    question=original.obj["problem"],
                    ground_truth=original.obj["answer"],
                    provenance=base | {"line": record.line, "answerable_file": sibling.path.name},
                    extra={"treecut": treecut_info, "checks": checks},
                    position=record.index,
                    location=record.loc,
                )
                continue
            yield ProblemRecord(
                data_source=data_source,
                position=record.index,
                question=record.obj["problem"],
                ground_truth=None,
                solution=None,
                extra={"treecut": {"answerable": False, "file": path.name, "line": record.line}},
                location=record.loc,
            )
            yield CandidateRecord(
                data_id=str(DataId(data_source, record.index, RewriteType.remove, 1)),
                data_source=data_source,
                problem_position=record.index,
                rewrite_type=RewriteType.remove,
                condition_index=1,
                rewritten_question=record.obj["problem"],
                unsolvable_reason=treecut.unsolvable_reason(record.verdict),
                provenance=base | {"line": record.line, "answerable_file": None},
                extra={"treecut": treecut_info, "checks": checks},
                position=record.index,
                location=record.loc,
            )

    return ImportPart(str(path), records(), info)
