"""The report's intervals and `compare` (design notes, section 9): Wilson against statsmodels, the bootstrap's
seed, coverage and item resampling, and ReliableMath Table 6's two models compared, McNemar against scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest
from sqlalchemy import Engine, select
from statsmodels.stats.proportion import proportion_confint

from annotator.db import read_session
from annotator.models import Transcript
from annotator.transcripts.counting import verdict_groups
from annotator.transcripts.report import report, tallies
from annotator.transcripts.uncertainty import CI_KEYS, Items, add_intervals, compare
from tests.support.transcripts import import_records, records_for
from tests.transcripts.test_report import TABLE_6


@pytest.fixture
def table_6(aime: Engine, tmp_path: Path) -> Engine:  # noqa: F811
    records = []
    for model, (a, u, _) in TABLE_6.items():
        records += records_for(aime, data_source="aime", model=model, prompt="reliable", a=a, u=u)
    import_records(aime, tmp_path / "table6.jsonl", records)
    return aime


def test_table_6_intervals(table_6: Engine) -> None:
    with read_session(table_6) as session:
        rows = report(session)
        again = report(session)
        other_seed = report(session, seed=1)
        alone = report(session, model="GPT-4o")
        off = report(session, resamples=0)
    for row in rows:
        for name, part in (("prec_a", "AS"), ("prud_a", "AR"), ("prec_u", "US"), ("prud_u", "UR")):
            n = row[part[0]]
            assert row[name + "_ci"] == pytest.approx(proportion_confint(row[part], n, method="wilson"), abs=1e-12)
        for name in ("prec", "prud"):
            low, high = row[name + "_ci"]
            assert low <= row[name] <= high, (row["model"], name, row[name + "_ci"])
        assert row["ci_note"] is None
    # DeepSeek-R1's Prec 0.547 [about 0.45, 0.63] lies above GPT-4o's 0.133 interval.
    assert rows[0]["prec_ci"][0] > rows[1]["prec_ci"][1]
    assert again == rows and [r["prec_ci"] for r in other_seed] != [r["prec_ci"] for r in rows]
    # A row's interval does not depend on the other rows in the report.
    assert alone == [rows[1]]
    assert all(r["prec_ci"] is None and r["prud_ci"] is None and r["prec_a_ci"] == rows[i]["prec_a_ci"]
               and r["ci_note"] == "bootstrap off (--bootstrap 0)" for i, r in enumerate(off))


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


def _intervals(items: Items, resamples: int = 2_000) -> dict[str, object]:
    row = _row(items)
    add_intervals([(row, items)], resamples=resamples)
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
    figures' differences; McNemar's b and c counted here from the stored verdicts, p from scipy."""
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
        if b + c:
            assert test["p"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9), name
        else:
            assert test["p"] is None
    assert result["mcnemar"]["prec_a"]["p"] < 0.001  # 21 against 3 of 30
    # Paired and seeded: the same again; each model against itself differs by nothing.
    assert compare(first, second) == result
    itself = compare(first, first)
    assert itself["prec_diff_ci"] == [0.0, 0.0] and itself["mcnemar"]["prec_a"] == {"b": 0, "c": 0, "p": None}


def test_compare_on_the_items_both_answered_only() -> None:
    first = _items([[1, 0, 0]] * 10, [[0, 1, 0]] * 10)
    second = {key: counts for key, counts in _items([[0, 0, 1]] * 10, [[0, 1, 0]] * 10).items() if key[1][0] <= 6}
    result = compare(first, second)
    assert (result["items_a"], result["items_u"]) == (6, 6)
    assert result["first"]["prec_a"] == 1.0 and result["second"]["prec_a"] == 0.0
    assert result["mcnemar"]["prec_a"] == {"b": 6, "c": 0, "p": pytest.approx(binomtest(6, 6, 0.5).pvalue)}
    no_u = compare(first, {k: v for k, v in second.items() if not k[0]})
    assert no_u["items_u"] == 0 and no_u["prec_diff_ci"] is None and "share no" in no_u["note"]
