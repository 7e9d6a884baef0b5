"""TreeCut generator and exact check: generated pairs, the shared files, malformed input, and the solver
against an independent Gaussian elimination."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from annotator import treecut
from annotator.treecut import Equation, Params, TreeCutParseError, check_problem, parse_sentence, solve

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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_vars": 4, "ans_depth": 1, "cut_depth": 1}, "ansDepth must be at least 2"),
        ({"num_vars": 3, "ans_depth": 4, "cut_depth": 1}, "numVars (3) must be at least ansDepth (4)"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 4}, "1 <= cutDepth < ansDepth"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 0}, "1 <= cutDepth < ansDepth"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 2, "order": "sideways"}, "order must be one of"),
        ({"num_vars": 6, "ans_depth": 4, "cut_depth": 2, "theme": "cars"}, "unknown theme 'cars'"),
        ({"num_vars": 15, "ans_depth": 4, "cut_depth": 2, "composite_name": False}, "14 item names"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Params(**kwargs)


def test_file_names_round_trip() -> None:
    params = Params(10, 8, 4, composite_name=False, order="backward")
    name = params.file_name(unanswerable=True, count=100)
    assert (
        name
        == "qa_theme-food_compositeName_False_numVars-10_ansDepth-8_order-backward_hallu-True_cutDepth-4_REP-100.jsonl"
    )
    assert treecut.parse_file_name(name) == {**params.as_dict(), "hallu": True, "REP": 100}
    assert treecut.parse_file_name("notes.jsonl") is None


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


# ------------------------------------------------------------------------------------- templates


@pytest.mark.parametrize(
    ("sentence", "terms", "rhs", "template"),
    [
        ("A burger at Texas BBQ costs 7 dollars.", ((1, "burger at Texas BBQ"),), 7, "price"),
        ("A pie costs a dollar.", ((1, "pie"),), 1, "price"),
        ("2 pies and a pizza cost 30 dollars.", ((2, "pie"), (1, "pizza")), 30, "sum"),
        (
            "3 pieces of cheese cake at Urban Plate cost a dollar more than 2 pizzas at Mike's Place.",
            ((3, "piece of cheese cake at Urban Plate"), (-2, "pizza at Mike's Place")),
            1,
            "difference",
        ),
        ("A pie costs 4 dollars less than 2 burgers.", ((1, "pie"), (-2, "burger")), -4, "difference"),
        (
            "The price of 2 cream brulees at Bistro Nice is the same as that of a creme brulee at Texas BBQ.",
            ((2, "creme brulee at Bistro Nice"), (-1, "creme brulee at Texas BBQ")),
            0,
            "same",
        ),
        # Quantities beyond the generator's (the general path).
        ("12 pies cost 60 dollars.", ((12, "pie"),), 60, "price"),
    ],
)
def test_every_template_parses(sentence: str, terms: tuple, rhs: int, template: str) -> None:
    assert parse_sentence(sentence) == Equation(terms, rhs, template)


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("A burger at Texas BBQ costs 7 dollars", "does not end with a single period"),
        ("A burger at Texas BBQ is tasty.", "does not match any TreeCut template"),
        ("A burger at Texas BBQ costs seven dollars.", "does not match any TreeCut template"),
        ("A burger at Texas BBQ costs 1 dollars.", "does not match any TreeCut template"),
        ("A burger at Texas BBQ costs 07 dollars.", "does not match any TreeCut template"),
        ("A burger at Texas BBQ costs 7 euros.", "does not match any TreeCut template"),
        ("A burger at Texas BBQ costs 3 dollars more then a pie.", "does not match any TreeCut template"),
        ("The price of a pie is higher than that of a burger.", "does not match any TreeCut template"),
        ("A sushi at Texas BBQ costs 7 dollars.", "unknown item name 'sushi at Texas BBQ'"),
        ("A burger at Chez Paul costs 7 dollars.", "unknown item name 'burger at Chez Paul'"),
        ("2 burger at Texas BBQ cost 7 dollars.", "quantity '2' does not agree"),
        ("A burgers at Texas BBQ costs 7 dollars.", "quantity 'A' does not agree"),
        ("A burger at Texas BBQ cost 7 dollars.", "'cost' does not agree with the quantity 1"),
        ("2 burgers at Texas BBQ costs 7 dollars.", "'costs' does not agree with the quantity 2"),
        ("1 burger at Texas BBQ costs 7 dollars.", "'1' is not a quantity"),
        ("A pie and a sushi cost 7 dollars.", "unknown item name 'sushi'"),
    ],
)
def test_malformed_sentences_and_unknown_templates_are_refused(sentence: str, reason: str) -> None:
    with pytest.raises(TreeCutParseError, match=reason) as error:
        parse_sentence(sentence)
    assert error.value.sentence == sentence


@pytest.mark.parametrize(
    "text",
    [
        "A pie costs 5 dollars.",
        "A pie costs 5 dollars. Question: what does a pie cost?",
        "A pie costs 5 dollars. Question: how much does a sushi cost?",
        "A pie costs 5 dollars Question: how much does a pie cost?",
    ],
)
def test_problems_without_a_proper_question_are_refused(text: str) -> None:
    with pytest.raises(TreeCutParseError):
        check_problem(text)


# ------------------------------------------------------------------------------------------ solver


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
    pivots: list[int] = []
    r = 0
    for c in range(len(variables)):
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
    if any(all(x == 0 for x in row[:-1]) and row[-1] != 0 for row in rows):
        return "contradictory", None
    q = column[question]
    for i, c in enumerate(pivots):
        if c == q:
            if all(rows[i][j] == 0 for j in range(len(variables)) if j != q):
                return "solvable", rows[i][-1]
            return "unsolvable", None
    return "unsolvable", None


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
