"""TreeCut generation: every generated pair passes the exact check, orders, reproducibility."""

from __future__ import annotations

import itertools

import pytest

from annotator.construction import treecut
from annotator.construction.treecut import Params, check_problem, parse_sentence

GRID = [
    Params(num_vars=n, ans_depth=d, cut_depth=c, composite_name=composite, order=order)
    for (n, d, c), composite, order in itertools.product(
        [(2, 2, 1), (4, 2, 1), (6, 4, 2), (10, 8, 7), (14, 6, 1), (20, 16, 8)], [True, False], treecut.ORDERS
    )
    if composite or n <= 14
]


@pytest.mark.parametrize(
    "params", GRID, ids=lambda p: f"{p.num_vars}-{p.ans_depth}-{p.cut_depth}-{p.composite_name}-{p.order}"
)
def test_every_generated_pair_passes_the_exact_check(params: Params) -> None:
    for pair in treecut.generate_pairs(params, count=25, seed=params.num_vars):
        answerable = check_problem(pair.problem)
        unanswerable = check_problem(pair.cut_problem)
        assert answerable.status == "solvable" and answerable.value == int(pair.answer)
        assert treecut.MIN_VALUE <= answerable.value <= treecut.MAX_VALUE
        assert unanswerable.status == "unsolvable" and unanswerable.value is None
        sentences, question = treecut.split_problem(pair.problem)
        cut_sentences, cut_question = treecut.split_problem(pair.cut_problem)
        assert question == cut_question == pair.question_name
        # numVars formulas (a tree has one edge per variable), the counterpart lacks exactly the cut one.
        assert len(sentences) == params.num_vars
        assert sentences[pair.cut_sentence_index] == pair.cut_sentence
        assert cut_sentences == sentences[: pair.cut_sentence_index] + sentences[pair.cut_sentence_index + 1 :]
        # The cut leaves the subtree below it undetermined, the questioned variable at cutDepth in it.
        assert pair.question_name in unanswerable.undetermined
        assert sorted(unanswerable.undetermined) == sorted(pair.undetermined)
        assert len(pair.undetermined) >= params.cut_depth + 1
        assert f"There are {len(pair.undetermined)} variables" in pair.cut_proof
        assert pair.proof.count("Combine with the fact") == params.ans_depth - 1


def test_order_forward_puts_the_root_fact_first_and_backward_last() -> None:
    forward = next(treecut.generate_pairs(Params(6, 4, 2, order="forward"), count=1, seed=3))
    backward = next(treecut.generate_pairs(Params(6, 4, 2, order="backward"), count=1, seed=3))
    first, last = treecut.split_problem(forward.problem)[0], treecut.split_problem(backward.problem)[0]
    assert parse_sentence(first[0]).template == "price"
    assert parse_sentence(last[-1]).template == "price"
    # The same random draws, so the same tree: backward is forward reversed.
    assert last == list(reversed(first))


def test_generation_is_reproducible_from_the_seed() -> None:
    params = Params(8, 6, 3)
    one = [p.problem for p in treecut.generate_pairs(params, count=5, seed=11)]
    again = [p.problem for p in treecut.generate_pairs(params, count=5, seed=11)]
    other = [p.problem for p in treecut.generate_pairs(params, count=5, seed=12)]
    assert one == again and one != other and len(set(one)) == 5
