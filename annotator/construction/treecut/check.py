"""The exact TreeCut check: whether the questioned variable is determined by the formulas, and its value."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from annotator.construction.treecut.parse import Equation, parse_problem


@dataclass
class Verdict:
    """The exact check's result: `solvable` with a value, `unsolvable`, or `contradictory`."""

    status: str
    value: Fraction | None = None
    question: str = ""
    undetermined: list[str] = field(default_factory=list)  # the questioned variable's component, when free
    component_formulas: int = 0  # formulas within that component
    detail: str = ""

    @property
    def label(self) -> str:
        """`solvable: 12`, `unsolvable` or `contradictory`, as the annotate page shows it."""
        return f"solvable: {format_value(self.value)}" if self.status == "solvable" else self.status

    def as_check(self) -> dict[str, str]:
        return {"name": "TreeCut exact check", "verdict": self.label, "detail": self.detail}


def format_value(value: Fraction | None) -> str:
    """`12`, `5/2` or `undetermined`."""
    if value is None:
        return "undetermined"
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def solve(equations: list[Equation], question: str) -> Verdict:
    """Whether `question` is determined by the equations, and its value; linear in the number of equations.

    Each connected component of the graph whose edges are two-variable equations is walked breadth first
    from one variable, set to the free parameter t: every variable becomes `(P + Q t) / D` (integers).
    Every equation not used as a tree edge (a given price, a second edge closing a cycle) becomes
    `alpha + beta t = gamma`: it fixes t when beta != 0, and is redundant or contradictory otherwise.
    """
    adjacency: dict[str, list[int]] = {}
    for index, equation in enumerate(equations):
        for _, variable in equation.terms:
            adjacency.setdefault(variable, []).append(index)
    affine: dict[str, tuple[int, int, int]] = {}  # variable -> (P, Q, D): value = (P + Q t) / D
    component_of: dict[str, int] = {}
    used = [False] * len(equations)
    components: list[_Component] = []
    contradiction = ""
    for start in adjacency:
        if start in affine:
            continue
        members, constraints = _spanning_tree(start, len(components), equations, adjacency, affine, component_of, used)
        t, conflict = _pin(constraints, equations, affine)
        contradiction = contradiction or conflict
        components.append(_Component(members, constraints, t))
    if contradiction:
        return Verdict(
            "contradictory", question=question, detail=f"The formulas have no common solution: {contradiction}."
        )
    if question not in affine:
        return Verdict(
            "unsolvable",
            question=question,
            undetermined=[question],
            detail=f"No formula mentions {question}, so its price is undetermined.",
        )
    return _question_verdict(question, affine, components[component_of[question]])


class _Component(NamedTuple):
    members: list[str]  # its variables, breadth first from the one set to t
    constraints: list[int]  # the equations that are not edges of its spanning tree
    t: tuple[int, int] | None  # t as an exact (numerator, denominator), None while free


def _spanning_tree(
    start: str,
    component: int,
    equations: list[Equation],
    adjacency: dict[str, list[int]],
    affine: dict[str, tuple[int, int, int]],
    component_of: dict[str, int],
    used: list[bool],
) -> tuple[list[str], list[int]]:
    """Walk the component of `start` breadth first, setting `start` to t and each new variable from its edge;
    returns its variables and the equations left over as constraints on t."""
    affine[start] = (0, 1, 1)
    component_of[start] = component
    members: list[str] = [start]
    constraints: list[int] = []
    for variable in members:
        for index in adjacency[variable]:
            if used[index]:
                continue
            used[index] = True
            terms = equations[index].terms
            if len(terms) == 2 and terms[0][1] != terms[1][1]:
                (a, u), (b, w) = terms if terms[0][1] == variable else (terms[1], terms[0])
                if w not in affine:
                    # a*u + b*w = c  ->  w = (c - a*u) / b
                    p, q, d = affine[u]
                    affine[w] = (equations[index].rhs * d - a * p, -a * q, b * d)
                    component_of[w] = component
                    members.append(w)
                    continue
            constraints.append(index)
    return members, constraints


def _pin(
    constraints: list[int], equations: list[Equation], affine: dict[str, tuple[int, int, int]]
) -> tuple[tuple[int, int] | None, str]:
    """A component's t as fixed by its constraints (None if free), and the first contradiction among them."""
    t: tuple[int, int] | None = None  # exact rational (numerator, denominator), compared by cross-multiplying
    contradiction = ""
    for index in constraints:
        alpha, beta, gamma = _linear_in_t(equations[index], affine)
        if beta == 0:
            if alpha != gamma:
                contradiction = contradiction or f"the formula {index + 1} contradicts the others"
            continue
        if t is None:
            t = (gamma - alpha, beta)
        elif t[0] * beta != (gamma - alpha) * t[1]:
            contradiction = contradiction or f"the formula {index + 1} contradicts the others"
    return t, contradiction


def _question_verdict(question: str, affine: dict[str, tuple[int, int, int]], component: _Component) -> Verdict:
    """The verdict on a variable some formula mentions, given its component (free of contradictions)."""
    p, q, d = affine[question]
    t = component.t
    if q == 0 or t is not None:
        # (p + q * tn / td) / d, one exact Fraction
        value = Fraction(p, d) if q == 0 else Fraction(p * t[1] + q * t[0], d * t[1])
        return Verdict(
            "solvable", value=value, question=question, detail=f"The price of {question} is {format_value(value)}."
        )
    members, constraints = component.members, component.constraints
    formulas = len(members) - 1 + len(constraints)
    undetermined = [m for m in members if affine[m][1] != 0]
    return Verdict(
        "unsolvable",
        question=question,
        undetermined=undetermined,
        component_formulas=formulas,
        detail=(
            f"{counted(len(members), 'variable')} ({', '.join(members)}) are linked by only "
            f"{counted(formulas, 'linear formula')}, none of which gives a price, so {question} can take any value."
        ),
    )


def counted(n: int, word: str) -> str:
    """`1, "linear formula"` -> "1 linear formula", `2` -> "2 linear formulas" (as the reference writes)."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def _linear_in_t(equation: Equation, affine: dict[str, tuple[int, int, int]]) -> tuple[int, int, int]:
    """`sum(a * (P + Q t) / D) = rhs` as integers `alpha + beta t = gamma` (multiplied by all D)."""
    alpha, beta, denominator = 0, 0, 1
    for a, variable in equation.terms:
        p, q, d = affine[variable]
        # alpha/denominator + a*(p + q t)/d, over the common denominator denominator*d
        alpha, beta, denominator = alpha * d + a * p * denominator, beta * d + a * q * denominator, denominator * d
    return alpha, beta, equation.rhs * denominator


def check_problem(text: str, *, theme: str = "food", cache: dict[str, Equation] | None = None) -> Verdict:
    """Parse a TreeCut problem and decide exactly whether its question is determined."""
    parsed = parse_problem(text, theme=theme, cache=cache)
    return solve(parsed.equations, parsed.question)


def answer_agrees(verdict: Verdict, answer: str) -> bool:
    """Whether a stated answer ("12" or "unknown") is the one the check computes."""
    if answer.strip().lower() == "unknown":
        return verdict.status == "unsolvable"
    if verdict.status != "solvable":
        return False
    try:
        return Fraction(answer.strip()) == verdict.value
    except (ValueError, ZeroDivisionError):
        return False


def unsolvable_reason(verdict: Verdict, *, cut_sentence: str | None = None) -> str:
    """Why an unsolvable TreeCut problem is unsolvable, in the annotators' words."""
    if verdict.status == "contradictory":
        return verdict.detail
    if verdict.status != "unsolvable":
        return f"The exact check finds the problem solvable ({verdict.label})."
    n = len(verdict.undetermined)
    names = ", ".join(verdict.undetermined)
    lead = f'Without "{cut_sentence}", the' if cut_sentence else "The"
    if n <= 1:
        return f"{lead} formulas never determine the price of {verdict.question}."
    return (
        f"{lead} remaining formulas leave {counted(n, 'variable')} undetermined ({names}): they are linked by only "
        f"{counted(verdict.component_formulas, 'linear formula')} and none of them has a given price, so the price of "
        f"{verdict.question} cannot be calculated."
    )
