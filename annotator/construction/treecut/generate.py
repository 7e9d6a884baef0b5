"""TreeCut generation (Appendix A, Algorithms 1 and 2): an answerable problem and its unanswerable counterpart.

Where the reference generator (j-bagel/treecut-math) is more specific than the paper's pseudo-code, we follow
the reference: each edge's coefficients have the sign pattern (+, +), (+, -) or (-, +) with equal chance and
magnitudes 1-3 (about a third of the two-item sentences are "X and Y cost N"); Algorithm 1's literal draw of
a, b from {-3..3} \\ {0}, with (-, -) read as (+, +), gives about a half and stays available as
`coefficients="paper"`. Composite names are two places and ceil(numVars/2) items (`themes.sample_names`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from annotator.construction.treecut.check import Verdict, check_problem, counted
from annotator.construction.treecut.params import Params
from annotator.construction.treecut.parse import Equation
from annotator.construction.treecut.render import ROOT, amount, clause, render_formula
from annotator.construction.treecut.themes import Name, get_theme, sample_names

MIN_VALUE, MAX_VALUE = 5, 15  # the food theme's prices (Appendix A); every theme has its own `prices`
COEFFICIENTS = (-3, -2, -1, 1, 2, 3)  # Algorithm 1, line 21
SIGN_PATTERNS = ((1, 1), (1, -1), (-1, 1))  # the reference generator's
COEFFICIENT_MODES = ("reference", "paper")


@dataclass
class Pair:
    """An answerable problem and its unanswerable counterpart, generated from the same tree."""

    params: Params
    index: int
    problem: str
    answer: str
    proof: str
    cut_problem: str
    cut_proof: str
    cut_sentence: str
    cut_sentence_index: int  # 0-based index of the cut formula among the answerable problem's sentences
    question_name: str
    undetermined: list[str]  # names of the variables the cut leaves undetermined, breadth first
    checks: dict[str, Verdict] = field(default_factory=dict)

    def answerable_record(self) -> dict[str, str]:
        return {"problem": self.problem, "answer": self.answer, "proof": self.proof}

    def unanswerable_record(self) -> dict[str, str]:
        return {"problem": self.cut_problem, "answer": "unknown", "proof": self.cut_proof}


def generate_pair(
    params: Params, rng: random.Random, *, index: int = 0, check: bool = True, coefficients: str = "reference"
) -> Pair:
    """One pair (Algorithms 1 and 2). With `check`, both problems go through the exact check, whose
    verdicts must be the answer and "unsolvable"; a disagreement is a bug and raises RuntimeError.
    `coefficients`: "reference" (the reference generator's sign patterns) or "paper" (Algorithm 1 literally)."""
    if coefficients not in COEFFICIENT_MODES:
        raise ValueError(f"coefficients must be one of {', '.join(COEFFICIENT_MODES)}, got {coefficients!r}")
    n, depth = params.num_vars, params.ans_depth
    theme = get_theme(params.theme)
    rand = rng.random
    # (i) values
    prices = theme.prices
    values = [prices[int(rand() * len(prices))] for _ in range(n)]
    # (ii) the tree, (iii) its edges breadth first, each edge named by its child (a node has one parent)
    parent, children = _grow_tree(n, depth, rand)
    edges = _breadth_first(children)
    # (iv) the cut edge, 0-based: the edge into x_{depth-cut_depth-1}
    cut_child = depth - params.cut_depth - 1
    # (v) a formula per edge
    names = sample_names(theme, n, rng, composite=params.composite_name)
    sentence_of = _render_edges(edges, parent, values, names, rng, coefficients)
    # (vi) order
    ordered = _arrange(edges, params.order, rng)
    sentences = [sentence_of[child] for child in ordered]
    q = depth - 1
    question = f" Question: how much does {names[q].article} {names[q].singular} cost?"
    cut_index = ordered.index(cut_child)
    cut_sentences = sentences[:cut_index] + sentences[cut_index + 1 :]
    undetermined, cut_proof = _cut_proof(cut_child, children, sentence_of, names, question=q)
    pair = Pair(
        params=params,
        index=index,
        problem=" ".join(sentences) + question,
        answer=str(values[q]),
        proof=_proof(sentence_of, values, names, depth=depth),
        cut_problem=" ".join(cut_sentences) + question,
        cut_proof=cut_proof,
        cut_sentence=sentence_of[cut_child],
        cut_sentence_index=cut_index,
        question_name=names[q].singular,
        undetermined=undetermined,
    )
    if check:
        pair.checks = _check(pair, theme=params.theme, value=values[q])
    return pair


def _grow_tree(n: int, depth: int, rand: Callable[[], float]) -> tuple[list[int], dict[int, list[int]]]:
    """The parent of each variable and the children of each node: root -> x_0 -> ... -> x_{depth-1} (the
    questioned variable), then each further variable under a random node already in the tree, the root included."""
    parent = [ROOT, *range(depth - 1)]
    children: dict[int, list[int]] = {ROOT: [0]}
    for i in range(1, depth):
        children[i - 1] = [i]
    for i in range(depth, n):
        p = int(rand() * (i + 1)) - 1
        parent.append(p)
        children.setdefault(p, []).append(i)
    return parent, children


def _breadth_first(children: dict[int, list[int]]) -> list[int]:
    """The tree's edges breadth first (Algorithm 2), each as its child."""
    queue = [ROOT]
    for node in queue:
        queue.extend(children.get(node, ()))
    return queue[1:]


def _render_edges(
    edges: list[int], parent: list[int], values: list[int], names: list[Name], rng: random.Random, coefficients: str
) -> list[str]:
    """The sentence of each edge, indexed by its child: a given price from the root, else random coefficients."""
    rand = rng.random
    sentence_of = [""] * len(values)
    for child in edges:
        p = parent[child]
        if p == ROOT:
            sentence_of[child] = render_formula(1, child, 0, ROOT, values[child], names)
            continue
        if coefficients == "paper":
            a, b = COEFFICIENTS[int(rand() * 6)], COEFFICIENTS[int(rand() * 6)]
        else:
            sign_a, sign_b = SIGN_PATTERNS[int(rand() * 3)]
            a, b = sign_a * (1 + int(rand() * 3)), sign_b * (1 + int(rand() * 3))
        rhs = a * values[p] + b * values[child]
        sentence_of[child] = render_formula(a, p, b, child, rhs, names)
    return sentence_of


def _arrange(edges: list[int], order: str, rng: random.Random) -> list[int]:
    ordered = list(edges)
    if order == "backward":
        ordered.reverse()
    elif order == "random":
        rng.shuffle(ordered)
    return ordered


def _proof(sentence_of: list[str], values: list[int], names: list[Name], *, depth: int) -> str:
    """The answerable problem's proof: the path root -> x_0 -> ... -> the questioned variable."""
    steps = [f"It is given as a fact that {clause(sentence_of[0])}."]
    for i in range(1, depth):
        steps.append(
            f"Combine with the fact that {clause(sentence_of[i])}, we get {names[i].article} {names[i].singular} costs "
            f"{amount(values[i])}."
        )
    return " ".join(steps)


def _cut_proof(
    cut_child: int, children: dict[int, list[int]], sentence_of: list[str], names: list[Name], *, question: int
) -> tuple[list[str], str]:
    """The variables the cut leaves undetermined (breadth first) and the unanswerable problem's proof: all that
    is known about the cut-off subtree."""
    sub_nodes = [cut_child]
    sub_edges: list[str] = []
    for node in sub_nodes:
        for child in children.get(node, ()):
            sub_nodes.append(child)
            sub_edges.append(clause(sentence_of[child]))
    undetermined = [names[i].singular for i in sub_nodes]
    proof = (
        f"All we know about the prices of {', '.join(undetermined)} are: {', '.join(sub_edges)}.\n"
        f"There are {len(sub_nodes)} variables but only {counted(len(sub_edges), 'linear formula')}, so we cannot "
        f"calculate "
        f"the price of {names[question].singular}."
    )
    return undetermined, proof


def _check(pair: Pair, *, theme: str, value: int) -> dict[str, Verdict]:
    """Both problems through the exact check; RuntimeError unless it finds `value` and "unsolvable"."""
    cache: dict[str, Equation] = {}  # the counterpart's sentences are the answerable one's, parsed once
    answerable = check_problem(pair.problem, theme=theme, cache=cache)
    unanswerable = check_problem(pair.cut_problem, theme=theme, cache=cache)
    if answerable.value != value or answerable.status != "solvable" or unanswerable.status != "unsolvable":
        raise RuntimeError(
            f"TreeCut check disagrees with the generator on pair {pair.index}: {answerable}, {unanswerable}"
        )
    return {"answerable": answerable, "unanswerable": unanswerable}


def generate_pairs(
    params: Params, *, count: int, seed: int, check: bool = True, coefficients: str = "reference"
) -> Iterator[Pair]:
    """`count` pairs, the same ones for the same parameters, seed and coefficient mode."""
    rng = random.Random(seed)
    for index in range(count):
        yield generate_pair(params, rng, index=index, check=check, coefficients=coefficients)
