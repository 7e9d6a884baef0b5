"""The ReliableMath release layout: `solve.json`, `unsol.json` and per-source `solve/` and `unsol/` files.

Only vetted candidates are released (`queue.vetted`: resolved to human_check = 1 over `labels_per_candidate`
labels, or adjudicated so; `include_incomplete` also takes those with fewer labels resolving to 1, and the
manifest says which rule was used and how many were left out), and only those meant to be unsolvable:
for a solvable-by-design candidate (a GSM-IC `distractor`) human_check = 1 means "answer unchanged", so it
never goes into the `unsol` files (the `gsm_ic` export writes those). Files imported from a release are
written back in their own style (`annotator.import_export.formats.reliablemath.dumps`), byte for byte, and so is the
release's `math_instruction.json` when the imported one had it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from annotator._util.files import write_file
from annotator.database.models import Candidate, Problem
from annotator.database.queries import (
    data_sources,
    iter_candidates,
    iter_problems,
    original_question_and_answer,
    source_file_options,
    source_files,
)
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN, VettedRule
from annotator.import_export.formats.reliablemath import FLOAT_DIFFICULTY, INSTRUCTION_KIND, NAME, dumps
from annotator.labelling import adaptive
from annotator.labelling.adjudication import label_provenance
from annotator.labelling.audit import estimate
from annotator.labelling.queue import incomplete, label_target, vetted


def solve_record(problem: dict[str, Any]) -> dict[str, Any]:
    record = {
        "data_source": problem["data_source"],
        "id": problem["source_id"],
        "question": problem["question"],
        "ground_truth": problem["ground_truth"],
    }
    if problem.get("solution") is not None:
        record["solution"] = problem["solution"]
    return record


def unsol_record(candidate: dict[str, Any]) -> dict[str, Any]:
    difficulty = candidate["difficulty_eval"]
    if (candidate.get("extra") or {}).get(FLOAT_DIFFICULTY):
        difficulty = float(difficulty)
    question, ground_truth = original_question_and_answer(candidate)
    return {
        "data_id": candidate["data_id"],
        "question": question,
        "rewritten_question": candidate["rewritten_question"],
        "ground_truth": ground_truth,
        "difficulty_eval": difficulty,
    }


def _rule(include_incomplete: bool) -> VettedRule:
    return VettedRule.include_incomplete if include_incomplete else VettedRule.complete_or_adjudicated


def records_by_source(
    session: Session, *, include_incomplete: bool = False
) -> Iterator[tuple[str, dict[str, list[dict[str, Any]]]]]:
    """Each data source's release records, in the release's order: (source, {"solve": [...], "unsol": [...]}),
    the unsol ones only vetted unsolvable-by-design candidates (`include_incomplete`: also the incomplete ones
    whose labels so far resolve to human_check = 1). The release files and the Hugging Face export hold these."""
    released = vetted(label_target(session), rule=_rule(include_incomplete))
    for source in data_sources(session):
        yield source, {
            "solve": [solve_record(p) for p in iter_problems(session, data_source=source)],
            "unsol": [unsol_record(c) for c in iter_candidates(
                session, data_source=source, where=released, exclude_rewrite_types=SOLVABLE_BY_DESIGN
            )],
        }


def write_release(session: Session, out: Path, *, include_incomplete: bool = False) -> dict[str, int]:
    """The release layout; only vetted unsolvable-by-design candidates (`include_incomplete`: also the
    incomplete ones whose labels so far resolve to human_check = 1)."""
    styles = source_file_options(session, format=NAME)
    counts: dict[str, int] = {}
    combined: dict[str, list[dict[str, Any]]] = {"solve": [], "unsol": []}
    for source, per_source in records_by_source(session, include_incomplete=include_incomplete):
        for kind, records in per_source.items():
            name = f"{kind}/{source}.json"
            write_json(out / name, records, styles.get(name, {}))
            counts[name] = len(records)
            combined[kind].extend(records)
    for kind, records in combined.items():
        write_json(out / f"{kind}.json", records, styles.get(f"{kind}.json", {}))
        counts[f"{kind}.json"] = len(records)
    for source_file in source_files(session, format=NAME):
        if source_file["kind"] == INSTRUCTION_KIND:  # the prompts, as imported (no records)
            write_file(out / source_file["name"], (source_file["options"] or {})["text"])
            counts[source_file["name"]] = 0
    return counts


def manifest(session: Session, *, include_incomplete: bool = False) -> dict[str, Any]:
    """The release manifest's own entries: `vetted`, the rule its candidates were chosen by, with
    `labels_per_candidate` and whether imported labels fill it (`imported_labels_count`), how many
    unsolvable-by-design candidates are `incomplete` (resolved to human_check = 1 over fewer labels, not
    adjudicated) and how many of those were `left_out` (and `adaptive_overlap`'s threshold and most labels when it
    is on); `labels`, where each released candidate's label comes from (`adjudication.label_provenance`); and
    `audit`, the share of vetted candidates truly unsolvable with its interval and the sample it rests on
    (`audit.estimate`)."""
    target = label_target(session)
    waiting = session.execute(
        select(func.count()).select_from(Candidate).where(
            incomplete(target), Candidate.rewrite_type.not_in([str(t) for t in SOLVABLE_BY_DESIGN])
        )
    ).scalar_one()
    rule = _rule(include_incomplete)
    chosen: dict[str, Any] = {"rule": rule.value, "labels_per_candidate": target.labels,
                              "imported_labels_count": target.count_imported, "incomplete": waiting,
                              "left_out": 0 if include_incomplete else waiting}
    setting = adaptive.overlap(session)
    if setting.adaptive:  # then `labels_per_candidate` is the most labels; fewer that settle a candidate complete it
        chosen["adaptive_overlap"] = {"threshold": setting.threshold, "max_labels": setting.max_labels}
    return {"vetted": chosen, "labels": label_provenance(session, where=vetted(target, rule=rule)),
            "audit": estimate(session)}


def write_json(path: Path, records: list[dict[str, Any]], style: dict[str, Any]) -> None:
    """A JSON array in the release's style (`indent=4`; non-ASCII escaped if `style` says so)."""
    write_file(path, dumps(records, ensure_ascii=bool(style.get("ensure_ascii"))))


def nothing_to_write(session: Session) -> str | None:
    """Why the release would hold no record, or None (the solve files hold every problem)."""
    return None if session.scalar(select(Problem.id).limit(1)) is not None else "the database holds no problems"
