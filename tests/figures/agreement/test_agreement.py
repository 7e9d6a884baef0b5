"""Agreement coefficients against the libraries and the published worked examples (design notes, section 8)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotator.figures.agreement import COEFFICIENTS, Ratings, agreement, label_agreement
from annotator.figures.agreement.ac1 import gwet_ac1
from annotator.figures.agreement.cohen import cohen
from annotator.figures.agreement.ratings import ONE_VALUE


def _from_table(table: list[list[int]]) -> Ratings:
    """Two raters from a 2x2 contingency table: table[i][j] items rated i by A and j by B."""
    triples = []
    item = 0
    for a in range(2):
        for b in range(2):
            for _ in range(table[a][b]):
                triples += [(item, "A", a), (item, "B", b)]
                item += 1
    return Ratings.from_triples(triples)


def test_two_by_two_table_gives_the_known_kappa_pi_and_ac1() -> None:
    """[[20,5],[10,15]]: Cohen's kappa 0.400, Scott's pi (= Fleiss' kappa for two raters) 0.394, AC1 0.406."""
    result = agreement(_from_table([[20, 5], [10, 15]]))
    assert result["items"] == 50
    assert result["percent"] == pytest.approx(0.7)
    assert result["pairwise"] == [{"a": "A", "b": "B", "items": 50, "kappa": pytest.approx(0.4, abs=5e-4)}]
    assert result["fleiss_kappa"] == pytest.approx(0.394, abs=5e-4)
    assert result["fleiss_raters"] == 2
    assert result["ac1"] == pytest.approx(0.406, abs=5e-4)


def test_krippendorff_2011_example_with_missing_values() -> None:
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability', 4 coders x 12 units: nominal 0.743."""
    nan = None
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        "C": [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    }
    triples = [(unit, coder, value) for coder, row in data.items() for unit, value in enumerate(row) if value]
    result = agreement(Ratings.from_triples(triples, categories=(1, 2, 3, 4, 5)))
    assert result["alpha"] == pytest.approx(0.743, abs=5e-4)
    assert result["items"] == 12
    # Most units have 4 coders: Fleiss' kappa runs over those and says so.
    assert result["fleiss_raters"] == 4


def test_values_agree_with_the_libraries_on_random_labels() -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rng = np.random.default_rng(7)
    truth = rng.random(400) < 0.8
    labels = np.where(rng.random((3, 400)) < 0.85, truth, ~truth).astype(int)
    triples = [(item, f"r{rater}", int(labels[rater, item])) for rater in range(3) for item in range(400)]
    result = agreement(Ratings.from_triples(triples))
    assert result["pairwise"][0]["kappa"] == pytest.approx(cohen_kappa_score(labels[0], labels[1]))
    table, _ = aggregate_raters(labels.T)
    assert result["fleiss_kappa"] == pytest.approx(fleiss_kappa(table))
    assert result["alpha"] == pytest.approx(krippendorff.alpha(labels, level_of_measurement="nominal"))
    assert not math.isnan(result["ac1"]) and result["ac1"] > result["fleiss_kappa"]  # prevalence 0.8


def test_one_category_only_is_null_with_the_reason_never_nan_or_zero() -> None:
    triples = [(item, rater, 1) for item in range(5) for rater in ("a", "b")]
    result = agreement(Ratings.from_triples(triples))
    assert result["percent"] == 1.0
    assert result["alpha"] is None and result["undefined"]["alpha"] == ONE_VALUE
    assert result["fleiss_kappa"] is None and result["undefined"]["fleiss_kappa"] == ONE_VALUE
    assert result["pairwise"] == [{"a": "a", "b": "b", "items": 5, "kappa": None, "reason": ONE_VALUE}]
    assert result["ac1"] == pytest.approx(1.0)  # AC1 stays defined where kappa collapses


def test_fewer_than_two_raters_per_item_is_null_with_the_reason() -> None:
    result = agreement(Ratings.from_triples([(0, "a", 1), (1, "b", 0), (2, "a", 0)]))
    assert result["items"] == 3
    for key in ("percent", "ac1", "alpha", "fleiss_kappa"):
        assert result[key] is None and result["undefined"][key]
    assert result["pairwise"] == []  # no pair shares an item
    assert result["fleiss_raters"] is None


def test_each_annotator_against_the_majority_of_the_others() -> None:
    # a and b always agree, c always says the opposite. For a (and b) the others tie, so there is no majority;
    # for c the majority is a and b's label, never c's.
    triples = []
    for item, value in enumerate([1, 0, 1, 0, 1, 1]):
        triples += [(item, "a", value), (item, "b", value), (item, "c", 1 - value)]
    result = agreement(Ratings.from_triples(triples), medians={"a": 4.0})
    people = {row["name"]: row for row in result["annotators"]}
    assert people["a"]["kappa_vs_majority"] is None  # the others (b, c) always tie: no majority
    assert people["a"]["undefined"]["kappa_vs_majority"] == "no shared items"
    assert people["a"]["items_vs_majority"] == 0
    # c says 1 on 2 of 6 items, the majority on 4 of 6: po = 0, pe = 2/6 * 4/6 + 4/6 * 2/6 = 4/9, kappa = -0.8.
    assert people["c"]["kappa_vs_majority"] == pytest.approx(-0.8)
    assert people["c"]["items_vs_majority"] == 6
    assert people["a"]["median_seconds"] == 4.0 and people["b"]["median_seconds"] is None
    assert people["a"]["labels"] == 6


def test_cohen_needs_shared_items() -> None:
    assert cohen(np.array([], dtype=int), np.array([], dtype=int), (0, 1)) == (None, "no shared items")


def test_ac1_is_undefined_without_pairs() -> None:
    assert gwet_ac1(np.array([[1, 0], [0, 1]])) is None


def test_label_agreement_takes_difficulty_from_items_accepted_twice_and_median_times() -> None:
    rows = [
        (1, "a", 1, 0, 3.0), (1, "b", 1, 1, 5.0), (1, "c", 0, None, None),  # accepted twice: counts
        (2, "a", 1, 1, 4.0), (2, "b", 0, None, 7.0),  # accepted once: no difficulty_eval item
        (3, "a", 1, 1, 100.0), (3, "b", 1, 1, None),
    ]
    result = label_agreement(rows)
    assert result["human_check"]["items"] == 3
    assert result["difficulty_eval"]["items"] == 2
    pair = result["difficulty_eval"]["pairwise"][0]
    assert (pair["a"], pair["b"], pair["items"]) == ("a", "b", 2)
    medians = {row["name"]: row["median_seconds"] for row in result["human_check"]["annotators"]}
    assert medians == {"a": 4.0, "b": 6.0, "c": None}


def test_cohen_matches_scikit_learn() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(11)
    for _ in range(20):
        a, b = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
        assert cohen(a, b, (0, 1))[0] == pytest.approx(cohen_kappa_score(a, b))


def test_kappa_against_the_majority_equals_scikit_learns_on_random_labels() -> None:
    """The Team page's chart: each rater against the strict majority of the others, checked against sklearn's
    cohen_kappa_score on the same items and an independently computed majority."""
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(18)
    raters = ["a", "b", "c", "d", "e"]
    triples = []
    for item in range(300):
        truth = int(rng.random() < 0.6)
        for rater in rng.choice(raters, size=int(rng.integers(2, 6)), replace=False):
            noise = {"a": 0.05, "b": 0.1, "c": 0.3, "d": 0.15, "e": 0.5}[str(rater)]
            triples.append((item, str(rater), truth if rng.random() > noise else 1 - truth))
    people = {row["name"]: row for row in agreement(Ratings.from_triples(triples))["annotators"]}
    by_item: dict[int, dict[str, int]] = {}
    for item, rater, label in triples:
        by_item.setdefault(item, {})[rater] = label
    for rater in raters:
        mine, majority = [], []
        for labels in by_item.values():
            if rater not in labels:
                continue
            others = [label for name, label in labels.items() if name != rater]
            ones = sum(others)
            if 2 * ones > len(others) or 2 * (len(others) - ones) > len(others):  # a strict majority only
                mine.append(labels[rater])
                majority.append(int(2 * ones > len(others)))
        assert people[rater]["items_vs_majority"] == len(mine) > 50
        assert people[rater]["kappa_vs_majority"] == pytest.approx(cohen_kappa_score(mine, majority))


@pytest.mark.parametrize("triples", [
    [(item, rater, (item + (rater == "b")) % 2) for item in range(6) for rater in ("a", "b", "c")],
    [(item, rater, 1) for item in range(5) for rater in ("a", "b")],  # one category only
    [(0, "a", 1), (1, "b", 0)],  # no item with two labels
])
def test_the_report_has_every_registered_coefficient_with_its_value_or_its_reason(
    triples: list[tuple[int, str, int]],
) -> None:
    assert len({c.key for c in COEFFICIENTS}) == len({c.label for c in COEFFICIENTS}) == len(COEFFICIENTS)
    result = agreement(Ratings.from_triples(triples))
    undefined = result.get("undefined", {})
    for coefficient in COEFFICIENTS:
        value = result[coefficient.key]
        assert (value is None) == (coefficient.key in undefined), coefficient.key
        assert value is None or (isinstance(value, float) and not math.isnan(value))
        assert coefficient.citation
    assert set(undefined) <= {c.key for c in COEFFICIENTS}
