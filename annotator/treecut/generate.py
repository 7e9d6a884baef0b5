"""TreeCut generation (Appendix A, Algorithms 1 and 2): an answerable problem and its unanswerable counterpart."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from annotator.treecut.check import Verdict, check_problem
from annotator.treecut.params import Params
from annotator.treecut.parse import Equation
from annotator.treecut.render import ROOT, amount, clause, render_formula
from annotator.treecut.themes import get_theme, theme_names

MIN_VALUE, MAX_VALUE = 5, 15
COEFFICIENTS = (-3, -2, -1, 1, 2, 3)


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


def generate_pair(params: Params, rng: random.Random, *, index: int = 0, check: bool = True) -> Pair:
    """One pair (Algorithms 1 and 2). With `check`, both problems go through the exact check, whose
    verdicts must be the answer and "unsolvable"; a disagreement is a bug and raises RuntimeError."""
    n, depth = params.num_vars, params.ans_depth
    theme = get_theme(params.theme)
    article = theme.article
    rand = rng.random
    # (i) values
    values = [MIN_VALUE + int(rand() * (MAX_VALUE - MIN_VALUE + 1)) for _ in range(n)]
    # (ii) the tree: root -> x_0 -> ... -> x_{depth-1} (the questioned variable), then random parents
    parent = [ROOT] + list(range(depth - 1))
    children: dict[int, list[int]] = {ROOT: [0]}
    for i in range(1, depth):
        children[i - 1] = [i]
    for i in range(depth, n):
        p = int(rand() * (i + 1)) - 1  # any node already in the tree, the root included
        parent.append(p)
        children.setdefault(p, []).append(i)
    # (iii) edges breadth first (Algorithm 2)
    edges: list[tuple[int, int]] = []
    queue = [ROOT]
    for node in queue:
        for child in children.get(node, ()):
            edges.append((node, child))
            queue.append(child)
    # (iv) the cut edge, 0-based: the edge into x_{depth-cut_depth-1}
    cut_child = depth - params.cut_depth - 1
    cut_edge = (parent[cut_child], cut_child)
    # (v) a formula per edge
    names = rng.sample(theme_names(theme, composite=params.composite_name), n)
    sentence_of: dict[tuple[int, int], str] = {}
    for edge in edges:
        parent_node, child = edge
        if parent_node == ROOT:
            sentence_of[edge] = render_formula(1, child, 0, ROOT, values[child], names, rng, article)
        else:
            a, b = COEFFICIENTS[int(rand() * 6)], COEFFICIENTS[int(rand() * 6)]
            rhs = a * values[parent_node] + b * values[child]
            sentence_of[edge] = render_formula(a, parent_node, b, child, rhs, names, rng, article)
    # (vi) order
    ordered = list(edges)
    if params.order == "backward":
        ordered.reverse()
    elif params.order == "random":
        rng.shuffle(ordered)
    sentences = [sentence_of[edge] for edge in ordered]
    q = depth - 1
    question = f" Question: how much does {article} {names[q].singular} cost?"
    cut_index = ordered.index(cut_edge)
    cut_sentences = sentences[:cut_index] + sentences[cut_index + 1 :]

    # Proof of the answerable problem: the path root -> x_q.
    path = [sentence_of[(parent[i], i)] for i in range(depth)]
    steps = [f"It is given as a fact that {clause(path[0])}."]
    for i in range(1, depth):
        steps.append(
            f"Combine with the fact that {clause(path[i])}, we get {article} {names[i].singular} costs "
            f"{amount(values[i])}."
        )
    # Proof of the unanswerable one: all that is known about the cut-off subtree.
    sub_nodes = [cut_child]
    sub_edges: list[str] = []
    for node in sub_nodes:
        for child in children.get(node, ()):
            sub_nodes.append(child)
            sub_edges.append(clause(sentence_of[(node, child)]))
    undetermined = [names[i].singular for i in sub_nodes]
    cut_proof = (
        f"All we know about the prices of {', '.join(undetermined)} are: {', '.join(sub_edges)}.\n"
        f"There are {len(sub_nodes)} variables but only {len(sub_edges)} linear formulas, so we cannot calculate "
        f"the price of {names[q].singular}."
    )
    pair = Pair(
        params=params,
        index=index,
        problem=" ".join(sentences) + question,
        answer=str(values[q]),
        proof=" ".join(steps),
        cut_problem=" ".join(cut_sentences) + question,
        cut_proof=cut_proof,
        cut_sentence=sentence_of[cut_edge],
        cut_sentence_index=cut_index,
        question_name=names[q].singular,
        undetermined=undetermined,
    )
    if check:
        cache: dict[str, Equation] = {}
        answerable = check_problem(pair.problem, theme=params.theme, cache=cache)
        unanswerable = check_problem(pair.cut_problem, theme=params.theme, cache=cache)
        if answerable.value != values[q] or answerable.status != "solvable" or unanswerable.status != "unsolvable":
            raise RuntimeError(
                f"TreeCut check disagrees with the generator on pair {index}: {answerable}, {unanswerable}"
            )
        pair.checks = {"answerable": answerable, "unanswerable": unanswerable}
    return pair


def generate_pairs(params: Params, *, count: int, seed: int, check: bool = True) -> Iterator[Pair]:
    """`count` pairs, the same ones for the same parameters and seed."""
    rng = random.Random(seed)
    for index in range(count):
        yield generate_pair(params, rng, index=index, check=check)
