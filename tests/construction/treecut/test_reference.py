"""TreeCut generation as the paper and the reference generator (j-bagel/treecut-math) make it: composite name
structure, sentence mix, wording, the outfit theme. Statistical tests draw a few thousand problems with a fixed
seed; each tolerance is four binomial standard errors, sqrt(p (1 - p) / N), of the proportion it tests (the
sentences of a problem draw their coefficients independently), so a correct generator fails about once in
15,000 runs, and since the seed is fixed a pass is reproducible. Every generated pair also goes through the
independent exact check (`generate_pairs` raises if the check disagrees with the generator).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import Engine

from annotator.construction import treecut
from annotator.construction.treecut import Params, parse_problem, render_formula
from annotator.construction.treecut.themes import Name, get_theme
from annotator.import_export.exports import export
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts

COUNT = 3000
SEED = 13
REFERENCE_FILES = {  # numVars -> the reference's answerable sample file (500 problems)
    n: f"qa_theme-food_compositeName_True_numVars-{n}_ansDepth-{n - 2}_order-random_hallu-False_REP-500.jsonl"
    for n in (4, 6, 8)
}


def _tolerance(p: float, n: int) -> float:
    return 4 * math.sqrt(p * (1 - p) / n)


def _two_item_sentences(problems: list[str]) -> Counter[str]:
    """Among the two-item sentences: how many are "X and Y cost N" and how many name one item at two places."""
    counts: Counter[str] = Counter()
    for text in problems:
        for equation in parse_problem(text).equations:
            if len(equation.terms) == 2:
                (_, first), (_, second) = equation.terms
                counts["two"] += 1
                counts["sum"] += equation.template == "sum"
                counts["same item"] += first.split(" at ")[0] == second.split(" at ")[0]
    return counts


def _reference(shared_data: Path, n: int) -> list[str]:
    path = shared_data / "treecut" / REFERENCE_FILES[n]
    return [json.loads(line)["problem"] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("num_vars", [4, 6, 8])
def test_composite_names_are_two_places_and_every_item_at_both(num_vars: int, shared_data: Path) -> None:
    """TreeCut Appendix C examples and the reference generator: two restaurants and ceil(numVars/2) dishes,
    every dish sold at both, so names collide on purpose (the compositeName effect, Section 4.3, Fig. 2).
    Two of the numVars names share a dish with chance 1/(numVars - 1); the reference's files agree."""
    params = Params(num_vars=num_vars, ans_depth=num_vars - 2, cut_depth=(num_vars - 2) // 2)
    problems = []
    for pair in treecut.generate_pairs(params, count=COUNT, seed=SEED):
        names = treecut.split_problem(pair.problem)[1:] + tuple(
            name for _, name in (t for e in parse_problem(pair.problem).equations for t in e.terms)
        )
        places = {name.split(" at ")[1] for name in names}
        items = {name.split(" at ")[0] for name in names}
        assert len(places) == 2 and len(items) == math.ceil(num_vars / 2), pair.problem
        assert set(names) == {f"{item} at {place}" for item in items for place in places}  # numVars is even
        problems.append(pair.problem)
    expected = 1 / (num_vars - 1)
    ours, theirs = _two_item_sentences(problems), _two_item_sentences(_reference(shared_data, num_vars))
    assert abs(ours["same item"] / ours["two"] - expected) <= _tolerance(expected, ours["two"])
    assert abs(theirs["same item"] / theirs["two"] - expected) <= _tolerance(expected, theirs["two"])


def test_simple_names_are_distinct_items() -> None:
    for pair in treecut.generate_pairs(Params(8, 6, 3, composite_name=False), count=200, seed=SEED):
        names = [name for e in parse_problem(pair.problem).equations for _, name in e.terms]
        assert all(" at " not in name for name in names) and len(set(names)) == 8


def test_sentence_mix_is_the_reference_generators(shared_data: Path) -> None:
    """The reference draws the sign patterns (+,+), (+,-), (-,+) with equal chance: a third of the two-item
    sentences are "X and Y cost N" (its sample files agree). Algorithm 1 read literally (a, b from
    {-3..3} \\ {0}, (-,-) read as (+,+)) gives a half; it stays available as `coefficients="paper"`."""
    params = Params(num_vars=8, ans_depth=6, cut_depth=3)
    ours = _two_item_sentences([p.problem for p in treecut.generate_pairs(params, count=COUNT, seed=SEED)])
    assert abs(ours["sum"] / ours["two"] - 1 / 3) <= _tolerance(1 / 3, ours["two"])
    for n in REFERENCE_FILES:
        theirs = _two_item_sentences(_reference(shared_data, n))
        assert abs(theirs["sum"] / theirs["two"] - 1 / 3) <= _tolerance(1 / 3, theirs["two"]), n
    paper = treecut.generate_pairs(params, count=COUNT, seed=SEED, coefficients="paper")
    literal = _two_item_sentences([p.problem for p in paper])
    assert abs(literal["sum"] / literal["two"] - 1 / 2) <= _tolerance(1 / 2, literal["two"])
    with pytest.raises(ValueError, match="coefficients must be one of reference, paper"):
        next(treecut.generate_pairs(params, count=1, seed=SEED, coefficients="other"))


def test_the_subject_of_more_and_less_is_the_positive_item() -> None:
    """Appendix A template 3, as the reference words it: p*x_pos - q*x_neg = b reads "pos costs b more than
    neg" for b > 0 and "pos costs |b| less than neg" for b < 0, whichever of the two is the parent."""
    names = [Name("burger at Texas BBQ", "burgers at Texas BBQ"), Name("overcoat", "overcoats")]
    render = render_formula  # no randomness: the same formula always reads the same
    assert render(2, 0, -3, 1, 7, names) == "2 burgers at Texas BBQ cost 7 dollars more than 3 overcoats."
    assert render(2, 0, -1, 1, -1, names) == "2 burgers at Texas BBQ cost a dollar less than an overcoat."
    assert render(-1, 0, 2, 1, 5, names) == "2 overcoats cost 5 dollars more than a burger at Texas BBQ."
    assert render(-1, 0, 1, 1, -4, names) == "An overcoat costs 4 dollars less than a burger at Texas BBQ."
    assert render(-2, 0, 3, 1, 0, names) == "The price of 3 overcoats is the same as that of 2 burgers at Texas BBQ."
    assert render(-2, 0, -3, 1, -9, names) == "2 burgers at Texas BBQ and 3 overcoats cost 9 dollars."


def test_one_formula_is_singular_in_the_proof() -> None:
    """The reference's unanswerable proofs say "only 1 linear formula" (its numVars-4 sample file has 67)."""
    params = Params(num_vars=4, ans_depth=2, cut_depth=1)
    proofs = [p.cut_proof for p in treecut.generate_pairs(params, count=300, seed=SEED)]
    assert any("but only 1 linear formula, so" in proof for proof in proofs)
    assert not any("1 linear formulas" in proof for proof in proofs)


def test_outfit_theme_prices_and_articles(sqlite_engine: Engine, tmp_path: Path) -> None:
    """The reference's outfit theme: prices 50-100 in steps of 5, "an" before a vowel; its files import and
    export byte for byte like the food ones."""
    theme = get_theme("outfit")
    assert theme.prices == tuple(range(50, 101, 5))
    params = Params(num_vars=8, ans_depth=6, cut_depth=3, theme="outfit")
    pairs = list(treecut.generate_pairs(params, count=300, seed=SEED))
    assert {int(p.answer) for p in pairs} <= set(theme.prices) and len({p.answer for p in pairs}) > 5
    text = " ".join(p.problem + " " + p.proof for p in pairs)
    assert re.search(r"\b[Aa]n (overcoat|umbrella|evening gown)", text)
    assert not re.search(r"\b[Aa] [aeiouAEIOU]", text) and not re.search(r"\b[Aa]n [^aeiouAEIOU\s]", text)
    answerable, unanswerable = treecut.write_pairs(pairs, params, tmp_path / "gen", seed=SEED)
    assert answerable.name.startswith("qa_theme-outfit_compositeName_True_numVars-8")
    import_parts(read(answerable) + read(unanswerable), engine=sqlite_engine)
    export("treecut", tmp_path / "out", engine=sqlite_engine)
    for path in (answerable, unanswerable):
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes()


def test_names_are_sampled_from_the_rng_only() -> None:
    """The same seed gives the same names (the construction draws from the generator's own random stream)."""
    theme = get_theme("food")
    first = treecut.themes.sample_names(theme, 7, random.Random(5), composite=True)
    assert first == treecut.themes.sample_names(theme, 7, random.Random(5), composite=True)
    assert len(first) == 7 and len({n.singular.split(" at ")[1] for n in first}) == 2
