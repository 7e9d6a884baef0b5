"""A demo project for an empty database: something to annotate within a minute, generated locally.

TreeCut pairs of several depths (each checked exactly), a few hand-written LaTeX-heavy problems with
`remove` and `contradict` candidates, and GSM-IC-style `distractor` variants of those, so that every page
and every guideline can be tried.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from annotator.construction import gsm_ic, treecut
from annotator.database.models import Problem
from annotator.database.vocabulary import DataId, RewriteType
from annotator.import_export.formats import treecut as treecut_format
from annotator.import_export.importer import import_parts
from annotator.import_export.records import CandidateRecord, ImportPart, Location, ProblemRecord

DATA_SOURCE = "demo"
SEED = 2025
TREECUT_SETTINGS = ((4, 2, 1), (6, 4, 2), (8, 6, 3), (10, 8, 4))  # numVars, ansDepth, cutDepth
PAIRS_PER_SETTING = 4

# (question, ground truth, solution, [(rewrite type, condition, rewritten question, reason)])
HANDWRITTEN: tuple[tuple[str, str, str, tuple[tuple[RewriteType, str, str, str], ...]], ...] = (
    (
        r"Let $f(x) = ax^2 + bx + c$ with $f(0) = 3$, $f(1) = 6$ and $f(-1) = 4$. Find $f(2)$.",
        "13",
        r"$c = 3$; $a + b = 3$ and $a - b = 1$ give $a = 2$, $b = 1$, so $f(2) = 4a + 2b + c = 13$.",
        (
            (
                RewriteType.remove,
                r"$f(-1) = 4$",
                r"Let $f(x) = ax^2 + bx + c$ with $f(0) = 3$ and $f(1) = 6$. Find $f(2)$.",
                r"Only $c = 3$ and $a + b = 3$ are known, so $f(2) = 2a + 9$ depends on the unknown $a$.",
            ),
            (
                RewriteType.contradict,
                r"$a + b = 5$",
                r"Let $f(x) = ax^2 + bx + c$ with $f(0) = 3$, $f(1) = 6$, $f(-1) = 4$ and $a + b = 5$. Find $f(2)$.",
                r"$f(0) = 3$ and $f(1) = 6$ force $a + b = 3$, which contradicts $a + b = 5$.",
            ),
        ),
    ),
    (
        r"A right triangle has legs $a = 6$ and $b = 8$. Find the length of its hypotenuse $c = \sqrt{a^2 + b^2}$.",
        "10",
        r"$c = \sqrt{6^2 + 8^2} = \sqrt{100} = 10$.",
        (
            (
                RewriteType.remove,
                r"$b = 8$",
                r"A right triangle has a leg $a = 6$. Find the length of its hypotenuse $c = \sqrt{a^2 + b^2}$.",
                r"Without the second leg $b$, $c = \sqrt{36 + b^2}$ can be any number greater than $6$.",
            ),
            (
                RewriteType.contradict,
                r"its area is $30$",
                r"A right triangle has legs $a = 6$ and $b = 8$, and its area is $30$. Find the length of its "
                r"hypotenuse $c = \sqrt{a^2 + b^2}$.",
                r"Legs $6$ and $8$ give an area of $\frac{1}{2} \cdot 6 \cdot 8 = 24 \neq 30$.",
            ),
        ),
    ),
    (
        r"Evaluate $\int_0^{k} \left(3x^2 + 2x\right)\,dx$, where $k$ is the root of $k^2 - 5k + 6 = 0$ with $k > 2$.",
        "36",
        r"$k = 3$ and $\int_0^{3} (3x^2 + 2x)\,dx = \left[x^3 + x^2\right]_0^3 = 27 + 9 = 36$.",
        (
            (
                RewriteType.remove,
                r"$k$ is the root of $k^2 - 5k + 6 = 0$",
                r"Evaluate $\int_0^{k} \left(3x^2 + 2x\right)\,dx$, where $k > 2$.",
                r"The integral equals $k^3 + k^2$, which is not determined by $k > 2$ alone.",
            ),
            (
                RewriteType.contradict,
                r"$k > 4$",
                r"Evaluate $\int_0^{k} \left(3x^2 + 2x\right)\,dx$, where $k$ is the root of $k^2 - 5k + 6 = 0$ with "
                r"$k > 4$.",
                r"The roots of $k^2 - 5k + 6 = 0$ are $2$ and $3$; none is greater than $4$.",
            ),
        ),
    ),
    (
        r"Let $A = \begin{pmatrix} 2 & 1 \\ 1 & 3 \end{pmatrix}$. Compute $\det\left(A^{-1}\right)$.",
        r"\frac{1}{5}",
        r"$\det A = 2 \cdot 3 - 1 \cdot 1 = 5$, so $\det(A^{-1}) = \frac{1}{\det A} = \frac{1}{5}$.",
        (
            (
                RewriteType.remove,
                r"$A = \begin{pmatrix} 2 & 1 \\ 1 & 3 \end{pmatrix}$",
                r"Let $A$ be a $2 \times 2$ matrix with $\operatorname{tr}(A) = 5$. Compute $\det\left(A^{-1}\right)$.",
                r"The trace does not determine $\det A$ (e.g. $\operatorname{diag}(1, 4)$ and "
                r"$\operatorname{diag}(2, 3)$).",
            ),
            (
                RewriteType.contradict,
                r"$A = \begin{pmatrix} 2 & 4 \\ 1 & 2 \end{pmatrix}$",
                r"Let $A = \begin{pmatrix} 2 & 4 \\ 1 & 2 \end{pmatrix}$ be invertible. "
                r"Compute $\det\left(A^{-1}\right)$.",
                r"$\det A = 2 \cdot 2 - 4 \cdot 1 = 0$, so $A$ is not invertible although the problem says it is.",
            ),
        ),
    ),
)


def _handwritten_part() -> ImportPart:
    loc = Location("demo", "hand-written")
    options = gsm_ic.Options(per_problem=1, seed=SEED)
    rng = random.Random(SEED)
    records: list[ProblemRecord | CandidateRecord] = []
    for position, (question, answer, solution, rewrites) in enumerate(HANDWRITTEN):
        problem = ProblemRecord(
            data_source=DATA_SOURCE,
            position=position,
            question=question,
            ground_truth=answer,
            solution=solution,
            location=loc,
        )
        records.append(problem)
        for rewrite_type, condition, rewritten, reason in rewrites:
            records.append(
                CandidateRecord(
                    data_id=str(DataId(DATA_SOURCE, position, rewrite_type, 1)),
                    data_source=DATA_SOURCE,
                    problem_position=position,
                    rewrite_type=rewrite_type,
                    condition_index=1,
                    extracted_condition=condition,
                    rewritten_condition=condition,
                    rewritten_question=rewritten,
                    unsolvable_reason=reason,
                    question=question,
                    ground_truth=answer,
                    provenance={"generator": "demo"},
                    location=loc,
                )
            )
        row = Problem(
            data_source=DATA_SOURCE, position=position, question=question, ground_truth=answer, solution=solution
        )
        for variant in gsm_ic.make_variants(question, solution=solution, answer=answer, options=options, rng=rng):
            records.append(gsm_ic.candidate_record(row, variant, k=1, options=options))
    return ImportPart("demo", records)


def load_demo(engine: Engine) -> dict[str, Any]:
    """Load the demo project in one transaction; loading it twice changes nothing. Returns what was added."""
    with tempfile.TemporaryDirectory(prefix="annotator-demo-") as tmp:
        parts: list[ImportPart] = []
        for num_vars, ans_depth, cut_depth in TREECUT_SETTINGS:
            params = treecut.Params(num_vars=num_vars, ans_depth=ans_depth, cut_depth=cut_depth)
            pairs = list(treecut.generate_pairs(params, count=PAIRS_PER_SETTING, seed=SEED + ans_depth))
            answerable, unanswerable = treecut.write_pairs(pairs, params, Path(tmp), seed=SEED + ans_depth)
            parts.append(treecut_format.read_file(answerable))
            parts.append(treecut_format.read_file(unanswerable))
        parts.append(_handwritten_part())
        summary = import_parts(parts, engine=engine)
    return {
        "problems": summary.problems_added,
        "candidates": summary.candidates_added,
        "treecut_pairs": PAIRS_PER_SETTING * len(TREECUT_SETTINGS),
        "unchanged": summary.unchanged,
    }
