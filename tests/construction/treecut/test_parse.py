"""TreeCut parsing: every template, malformed input, problems without a proper question."""

from __future__ import annotations

import pytest

from annotator.construction.treecut import Equation, TreeCutParseError, check_problem, parse_sentence


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
