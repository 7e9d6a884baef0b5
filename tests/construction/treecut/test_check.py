"""The exact TreeCut check: the shared files, and the solver against an independent Gaussian elimination."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

from annotator.construction import treecut
from annotator.construction.treecut import Equation, check_problem, solve


def test_every_record_of_the_shared_files_passes(shared_data: Path) -> None:
    files = sorted((shared_data / "treecut").glob("*.jsonl"))
    assert len(files) == 6
    for path in files:
        params = treecut.parse_file_name(path.name)
        assert params is not None
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            record = json.loads(line)
            verdict = check_problem(record["problem"])
            assert treecut.answer_agrees(verdict, record["answer"]), f"{path.name} line {number}: {verdict}"
            assert (verdict.status == "unsolvable") == params["hallu"]


def test_solver_handles_cycles_fractions_redundancy_and_contradictions() -> None:
    def verdict(text: str) -> treecut.Verdict:
        return check_problem(f"{text} Question: how much does a pie cost?")

    # A cycle without any given price still determines both: x + y = 10, x - y = 2.
    assert verdict("A pie and a burger cost 10 dollars. A pie costs 2 dollars more than a burger.").value == 6
    # Exact fractions: 2 pies = 5 dollars.
    assert verdict("2 pies cost 5 dollars.").value == Fraction(5, 2)
    # A redundant second formula changes nothing.
    redundant = verdict("A pie and a burger cost 10 dollars. 2 pies and 2 burgers cost 20 dollars.")
    assert redundant.status == "unsolvable" and sorted(redundant.undetermined) == ["burger", "pie"]
    contradictory = verdict("A pie and a burger cost 10 dollars. 2 pies and 2 burgers cost 21 dollars.")
    assert contradictory.status == "contradictory" and contradictory.label == "contradictory"
    # A variable no formula mentions.
    assert verdict("A burger costs 3 dollars.").undetermined == ["pie"]
    # Determined even if another component is free.
    mixed = verdict("A pie costs 9 dollars. A burger and a pizza cost 20 dollars.")
    assert mixed.label == "solvable: 9" and mixed.as_check()["name"] == "TreeCut exact check"


def _gauss(equations: list[Equation], question: str) -> tuple[str, Fraction | None]:
    """Independent oracle: Gauss-Jordan elimination over Fractions on the whole system."""
    variables = sorted({v for e in equations for _, v in e.terms} | {question})
    column = {v: i for i, v in enumerate(variables)}
    rows = []
    for e in equations:
        row = [Fraction(0)] * (len(variables) + 1)
        for a, v in e.terms:
            row[column[v]] += a
        row[-1] = Fraction(e.rhs)
        rows.append(row)
    pivots = _reduce(rows, len(variables))
    if any(all(x == 0 for x in row[:-1]) and row[-1] != 0 for row in rows):
        return "contradictory", None
    q = column[question]
    for i, c in enumerate(pivots):
        if c == q:
            if all(rows[i][j] == 0 for j in range(len(variables)) if j != q):
                return "solvable", rows[i][-1]
            return "unsolvable", None
    return "unsolvable", None


def _reduce(rows: list[list[Fraction]], width: int) -> list[int]:
    """Bring the augmented `rows` to reduced row echelon form in place; the pivot columns, in row order."""
    pivots: list[int] = []
    r = 0
    for c in range(width):
        pivot = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        rows[r] = [x / rows[r][c] for x in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                rows[i] = [x - rows[i][c] * y for x, y in zip(rows[i], rows[r], strict=True)]
        pivots.append(c)
        r += 1
    return pivots


def test_solver_agrees_with_gaussian_elimination_on_random_systems() -> None:
    rng = random.Random(5)
    names = ["pie", "burger", "pizza", "lasagna", "fruit tart"]
    for _ in range(3000):
        equations = []
        for _ in range(rng.randint(0, 6)):
            x, y = rng.sample(names, 2)
            if rng.random() < 0.3:
                equations.append(Equation(((rng.choice([1, 2, 3]), x),), rng.randint(0, 30), "price"))
            else:
                equations.append(
                    Equation(
                        ((rng.choice([-3, -2, -1, 1, 2, 3]), x), (rng.choice([-2, -1, 1, 2]), y)),
                        rng.randint(-9, 30),
                        "x",
                    )
                )
        question = rng.choice(names)
        got = solve(equations, question)
        expected_status, expected_value = _gauss(equations, question)
        assert (got.status, got.value) == (expected_status, expected_value), (equations, question)
