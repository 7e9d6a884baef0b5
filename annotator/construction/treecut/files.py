"""TreeCut files: the answerable and unanswerable JSONL files, named like the reference generator's."""

from __future__ import annotations

import json
from pathlib import Path

from annotator.construction.treecut.generate import Pair
from annotator.construction.treecut.params import Params


def write_pairs(
    pairs: list[Pair], params: Params, out: Path, *, seed: int | None = None, coefficients: str = "reference"
) -> tuple[Path, Path]:
    """The answerable and the unanswerable JSONL file of `pairs` in directory `out`, named like the reference's;
    with `seed`, a note beside them of how to make them again (parameters, seed, coefficient mode)."""
    out.mkdir(parents=True, exist_ok=True)
    answerable = out / params.file_name(unanswerable=False, count=len(pairs))
    unanswerable = out / params.file_name(unanswerable=True, count=len(pairs))
    answerable.write_bytes("".join(json.dumps(p.answerable_record()) + "\n" for p in pairs).encode("utf-8"))
    unanswerable.write_bytes("".join(json.dumps(p.unanswerable_record()) + "\n" for p in pairs).encode("utf-8"))
    if seed is not None:
        # TreeCut records carry no metadata; the seed goes beside them, where importing the files finds it.
        meta = {"generator": "annotator treecut", **params.as_dict(), "count": len(pairs), "seed": seed}
        meta["coefficients"] = coefficients
        generation_file(answerable).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return answerable, unanswerable


def generation_file(answerable: Path) -> Path:
    """Where `write_pairs` notes the seed of an answerable file and its counterpart."""
    return answerable.with_name(answerable.name.removesuffix(".jsonl") + ".generation.json")
