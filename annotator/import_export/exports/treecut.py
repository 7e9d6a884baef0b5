"""TreeCut JSONL: every imported TreeCut file under its own name, byte for byte.

A line that `json.dumps` would not write the same way was kept raw on import; blank lines and the final
newline were noted in the file's options (`annotator.import_export.formats.treecut`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session

from annotator._util.files import write_file
from annotator.database.queries import iter_candidates, iter_problems, source_files
from annotator.database.vocabulary import RewriteType
from annotator.import_export.formats.treecut import NAME, dumps


def answerable_line(problem: dict[str, Any], ensure_ascii: bool) -> str:
    info = (problem.get("extra") or {}).get("treecut") or {}
    if "raw" in info:
        return info["raw"]
    return dumps(
        {"problem": problem["question"], "answer": problem["ground_truth"], "proof": problem["solution"]}, ensure_ascii
    )


def unanswerable_line(candidate: dict[str, Any], ensure_ascii: bool) -> str:
    info = (candidate.get("extra") or {}).get("treecut") or {}
    if "raw" in info:
        return info["raw"]
    return dumps(
        {"problem": candidate["rewritten_question"], "answer": info["answer"], "proof": info["proof"]}, ensure_ascii
    )


def file_text(lines: list[str], options: dict[str, Any]) -> str:
    """The lines of a file with its blank lines put back and its final newline as it was."""
    blanks = {int(number): text for number, text in (options.get("blank_lines") or {}).items()}
    out: list[str] = []
    records = iter(lines)
    total = len(lines) + len(blanks)
    for number in range(1, total + 1):
        out.append(blanks[number] if number in blanks else next(records))
    text = "\n".join(out)
    return text + "\n" if options.get("final_newline", True) and out else text


def write_files(session: Session, out: Path) -> dict[str, int]:
    """Every TreeCut file that was imported, under its own name, byte for byte."""
    counts: dict[str, int] = {}
    for source_file in source_files(session, format=NAME):
        name, options = source_file["name"], source_file["options"] or {}
        data_source, ensure_ascii = options["data_source"], bool(options.get("ensure_ascii", True))
        if source_file["kind"] == "answerable":
            lines = [answerable_line(p, ensure_ascii) for p in iter_problems(session, data_source=data_source)]
        else:
            lines = [
                unanswerable_line(c, ensure_ascii)
                for c in iter_candidates(session, data_source=data_source)
                if c["rewrite_type"] == RewriteType.remove
                and ((c.get("extra") or {}).get("treecut") or {}).get("file") == name
            ]
        write_file(out / name, file_text(lines, options))
        counts[name] = len(lines)
    return counts


def nothing_to_write(session: Session) -> str | None:
    """Why the export would write no file, or None."""
    return None if source_files(session, format=NAME) else "no TreeCut files were imported"
