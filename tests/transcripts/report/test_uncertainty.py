"""The report's intervals and `compare` (design notes, section 9): Wilson against statsmodels, the bootstrap's
seed, coverage and item resampling, and ReliableMath Table 6's two models compared, McNemar against scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest
from sqlalchemy import Engine, select
from statsmodels.stats.proportion import proportion_confint

from annotator.database.engine import read_session
from annotator.database.models import Transcript
from annotator.figures.agreement.intervals import newcombe_paired
from annotator.transcripts.report.counting import verdict_groups
from annotator.transcripts.report.scores import report, tallies
from annotator.transcripts.report.uncertainty import CI_KEYS, Items, add_intervals, compare
from tests.support.judged_answers import TABLE_6
from tests.support.transcripts import import_records, records_for


@pytest.fixture
def table_6(aime: Engine, tmp_path: Path) -> Engine:  # noqa: F811
    records = []
    for model, (a, u, _) in TABLE_6.items():
        records += records_for(aime, data_source="aime", model=model, prompt="reliable", a=a, u=u)
    import_records(aime, tmp_path / "table6.jsonl", records)
    return aime


def test_table_6_intervals(table_6: Engine) -> None:
    """One response per item: Prec and Prud get MOVER over the Wilson intervals of their A and U parts, the same
    whatever the seed and with the bootstrap off."""
    with read_session(table_6) as session:
        rows = report(session)
        other_seed = report(session, seed=1)
        alone = report(session, model="GPT-4o")
        off = report(session, resamples=0)
        # The read found no second sample, so no items were kept; per-item groups give the same rows.
        by_items = report(session, groups=verdict_groups(session))
    assert by_items == rows
    for row in rows:
        wilson = {}
        for name, part in (("prec_a", "AS"), ("prud_a", "AR"), ("prec_u", "US"), ("prud_u", "UR")):
            wilson[name] = proportion_confint(row[part], row[part[0]], method="wilson")
            assert row[name + "_ci"] == pytest.approx(wilson[name], abs=1e-12)
        for name in ("prec", "prud"):
            low, high = row[name + "_ci"]
            assert low < row[name] < high or low == row[name] == 0, (row["model"], name, row[name + "_ci"])
            a, u = row[name + "_a"], row[name + "_u"]
            (la, ua), (lu, uu) = wilson[name + "_a"], wilson[name + "_u"]
            assert low == pytest.approx(row[name] - np.hypot((a - la) / 2, (u - lu) / 2), abs=1e-12)
            assert high == pytest.approx(row[name] + np.hypot((ua - a) / 2, (uu - u) / 2), abs=1e-12)
        assert row["ci_note"] is None and row["ci_method"] == "mover-wilson"
    # DeepSeek-R1's Prec 0.547 [about 0.46, 0.63] lies above GPT-4o's 0.133 interval.
    assert rows[0]["prec_ci"][0] > rows[1]["prec_ci"][1]
    assert other_seed == rows and off == rows
    # A row's interval does not depend on the other rows in the report.
    assert alone == [rows[1]]


def test_one_outcome_per_set_still_has_an_interval() -> None:
    """Right on 3 solvable items, wrong on 5 unsolvable ones: Prec 0.500 with an interval around it, not
    [0.50, 0.50] (each set's Wilson interval has width even when all its items have one verdict)."""
    row = _intervals(_items([[1, 0, 0]] * 3, [[0, 0, 1]] * 5))
    a_low, _ = proportion_confint(3, 3, method="wilson")
    _, u_high = proportion_confint(0, 5, method="wilson")
    assert row["prec_ci"] == pytest.approx([0.5 - (1 - a_low) / 2, 0.5 + u_high / 2], abs=1e-12)
    assert 0.2 < row["prec_ci"][0] < 0.5 < row["prec_ci"][1] < 0.8
    assert row["prud_ci"][0] == 0 < row["prud_ci"][1] and row["ci_method"] == "mover-wilson"


def test_several_samples_per_item_keep_the_seeded_bootstrap() -> None:
    items = _items([[2, 0, 1], [0, 1, 2], [3, 0, 0]] * 5, [[1, 1, 1], [0, 0, 3]] * 6)
    row, again, other = _intervals(items), _intervals(items), _intervals(items, seed=1)
    assert row["ci_method"] == "bootstrap" and row["ci_note"] is None
    assert row == again and row["prec_ci"] != other["prec_ci"]
    off = _intervals(items, resamples=0)
    assert off["prec_ci"] is None and off["ci_method"] is None and off["ci_note"] == "bootstrap off (--bootstrap 0)"


def _items(a: list[list[int]], u: list[list[int]]) -> Items:
    """Items from [S, R, F] counts per item, A ones first."""
    items: Items = {}
    for unsolvable, part in ((False, a), (True, u)):
        for index, counts in enumerate(part):
            items[(unsolvable, (index + 1, -1 if not unsolvable else index + 1))] = list(counts)
    return items


def _row(items: Items) -> dict[str, object]:
    row: dict[str, object] = {}
    for part, unsolvable in (("A", False), ("U", True)):
        counts = np.array([c for key, c in items.items() if key[0] == unsolvable]).reshape(-1, 3).sum(axis=0)
        row.update({part: int(counts.sum()), part + "S": int(counts[0]), part + "R": int(counts[1])})
    return row


def _intervals(items: Items, resamples: int = 2_000, seed: int = 0) -> dict[str, object]:
    row = _row(items)
    add_intervals([(row, items)], resamples=resamples, seed=seed)
    return row


def test_more_items_narrow_the_interval() -> None:
    few = _intervals(_items([[1, 0, 0], [0, 0, 1]] * 15, [[1, 0, 0], [0, 1, 0], [0, 0, 1]] * 10))
    many = _intervals(_items([[1, 0, 0], [0, 0, 1]] * 150, [[1, 0, 0], [0, 1, 0], [0, 0, 1]] * 100))
    for name in CI_KEYS:
        assert np.diff(many[name]) < np.diff(few[name]), name


def test_the_bootstrap_resamples_items_not_samples() -> None:
    """Four samples per item that agree with each other carry one item's worth of evidence: the interval is as
    wide as with one sample per item, and wider than for four times the items with one sample each."""
    one = _intervals(_items([[1, 0, 0], [0, 0, 1]] * 20, [[1, 0, 0], [0, 1, 0]] * 20))
    four = _intervals(_items([[4, 0, 0], [0, 0, 4]] * 20, [[4, 0, 0], [0, 4, 0]] * 20))
    spread = _intervals(_items([[1, 0, 0], [0, 0, 1]] * 80, [[1, 0, 0], [0, 1, 0]] * 80))
    width = {name: float(np.diff(row["prec_ci"])[0]) for name, row in (("one", one), ("four", four),
                                                                        ("spread", spread))}
    assert width["four"] == pytest.approx(width["one"], rel=0.15)
    assert width["four"] > 1.5 * width["spread"]


def test_undefined_figures_have_no_interval_and_say_why() -> None:
    row = _intervals(_items([], [[1, 0, 0], [0, 1, 0]]))
    assert row["prec_a_ci"] is None and row["prud_a_ci"] is None and row["prec_ci"] is None
    assert row["prec_u_ci"] is not None and row["ci_note"] == "no responses on solvable items (A)"


def _successes(engine: Engine, model: str, verdict: str) -> dict[str, bool]:
    with read_session(engine) as session:
        query = select(Transcript.data_id, Transcript.candidate_id, Transcript.judge).where(Transcript.model == model)
        return {(data_id, candidate_id is not None): judge == verdict
                for data_id, candidate_id, judge in session.execute(query)}


def test_compare_table_6_models(table_6: Engine) -> None:
    """DeepSeek-R1 against GPT-4o on the AIME items (all answered by both): the differences are the printed
    figures' differences; McNemar's b and c counted here from the stored verdicts, p from scipy; one response
    per item, so each set's difference has Newcombe's paired interval from those counts, and Prec's and Prud's
    are MOVER over the two sets."""
    with read_session(table_6) as session:
        pooled = tallies(verdict_groups(session))
    first, second = pooled[("DeepSeek-R1", "reliable")].items, pooled[("GPT-4o", "reliable")].items
    result = compare(first, second)
    assert (result["items_a"], result["items_u"]) == (30, 132)
    printed = {name: (TABLE_6["DeepSeek-R1"][2][i], TABLE_6["GPT-4o"][2][i])
               for i, name in enumerate(("prec_a", "prud_a", "prec_u", "prud_u", "prec", "prud"))}
    for name, (one, two) in printed.items():
        assert result["difference"][name] == pytest.approx(one - two, abs=0.0025), name
    low, high = result["prec_diff_ci"]
    assert 0 < low < result["difference"]["prec"] < high  # R1's higher Prec is no accident of the items
    low, high = result["prud_diff_ci"]
    assert low < result["difference"]["prud"] < high
    for name, verdict, unsolvable in (("prec_a", "S", False), ("prud_a", "R", False), ("prec_u", "S", True),
                                      ("prud_u", "R", True)):
        one, two = _successes(table_6, "DeepSeek-R1", verdict), _successes(table_6, "GPT-4o", verdict)
        keys = [key for key in one if key[1] == unsolvable]
        b = sum(one[k] and not two[k] for k in keys)
        c = sum(two[k] and not one[k] for k in keys)
        test = result["mcnemar"][name]
        assert (test["b"], test["c"]) == (b, c), name
        both = sum(one[k] and two[k] for k in keys)
        assert result[name + "_diff_ci"] == pytest.approx(newcombe_paired(both, b, c, len(keys) - both - b - c))
        if b + c:
            assert test["p"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9), name
        else:
            assert test["p"] is None
    assert result["mcnemar"]["prec_a"]["p"] < 0.001  # 21 against 3 of 30
    assert result["diff_ci_method"] == "newcombe-mover" and result["note"] is None
    for name in ("prec", "prud"):
        d = result["difference"]
        (la, ua), (lu, uu) = result[name + "_a_diff_ci"], result[name + "_u_diff_ci"]
        low, high = result[name + "_diff_ci"]
        assert low == pytest.approx(d[name] - np.hypot(d[name + "_a"] - la, d[name + "_u"] - lu) / 2, abs=1e-12)
        assert high == pytest.approx(d[name] + np.hypot(ua - d[name + "_a"], uu - d[name + "_u"]) / 2, abs=1e-12)
    # The same again, whatever the seed; each model against itself differs by nothing, give or take the interval.
    assert compare(first, second) == result == compare(first, second, seed=3, resamples=0)
    itself = compare(first, first)
    low, high = itself["prec_diff_ci"]
    assert low == pytest.approx(-high) and high > 0 and itself["mcnemar"]["prec_a"] == {"b": 0, "c": 0, "p": None}


def test_compare_with_several_samples_per_item_is_a_paired_bootstrap() -> None:
    first = _items([[2, 0, 0], [1, 0, 1]] * 10, [[0, 2, 0], [1, 0, 1]] * 10)
    second = _items([[0, 0, 2], [1, 0, 1]] * 10, [[0, 2, 0], [0, 0, 2]] * 10)
    result = compare(first, second)
    assert result["diff_ci_method"] == "bootstrap" and "prec_a_diff_ci" not in result
    low, high = result["prec_diff_ci"]
    assert low < result["difference"]["prec"] < high and result != compare(first, second, seed=1)
    off = compare(first, second, resamples=0)
    assert off["prec_diff_ci"] is None and off["note"] == "bootstrap off (--bootstrap 0)"


def test_compare_on_the_items_both_answered_only() -> None:
    first = _items([[1, 0, 0]] * 10, [[0, 1, 0]] * 10)
    second = {key: counts for key, counts in _items([[0, 0, 1]] * 10, [[0, 1, 0]] * 10).items() if key[1][0] <= 6}
    result = compare(first, second)
    assert (result["items_a"], result["items_u"]) == (6, 6)
    assert result["first"]["prec_a"] == 1.0 and result["second"]["prec_a"] == 0.0
    assert result["mcnemar"]["prec_a"] == {"b": 6, "c": 0, "p": pytest.approx(binomtest(6, 6, 0.5).pvalue)}
    no_u = compare(first, {k: v for k, v in second.items() if not k[0]})
    assert no_u["items_u"] == 0 and no_u["prec_diff_ci"] is None and "share no" in no_u["note"]
