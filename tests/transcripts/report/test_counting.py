"""A big report's read (`counting.read` past its limit: reviewed responses and item bins in SQL) gives the figures
the per-item read gives, and its bootstrap from bins is the item bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import Engine, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript
from annotator.figures.agreement.intervals import bootstrap_weights, percentile
from annotator.transcripts.report import counting
from annotator.transcripts.report.disagreed import disagreed_items
from annotator.transcripts.report.scores import CI_KEYS, KEYS, reports
from annotator.transcripts.report.uncertainty import add_intervals
from tests.support.judged_answers import add_answers

BREAKDOWNS = [["data_source"], ["rewrite_type"], ["difficulty_eval"], ["data_source", "rewrite_type"]]


def _mixed(engine: Engine, *, samples: bool) -> None:
    """Three models, two prompts, several samples per item (or one each), solvable problems and distractors
    (solvable by design), difficulties, a response the judge has not judged yet, reviews that override the
    judge."""
    table = [{"a": "SSF", "b": "R", "c": "F"}, {"a": "S", "b": "S"}, {"a": "RF", "b": "FF", "c": "S"},
             {"a": "F", "c": "R"}, {"a": "SS", "b": "S"}, {"a": "R", "b": "F"}, {"a": "S", "b": "R"},
             {"a": "F", "b": "F", "c": "F"}]
    more = [{"a": "S", "b": "F"}, {"a": "RR", "b": "S"}, {"a": "F"}]
    if not samples:
        table, more = ([{model: verdicts[-1] for model, verdicts in answers.items()} for answers in part]
                       for part in (table, more))
    add_answers(engine, table, rewrite_types=("remove", "contradict", "distractor"), solvable=frozenset({6, 7}),
                difficulty=(0, 1, None, 1, 0, 1))
    add_answers(engine, more, prompt="reliable", start=20)
    with write_session(engine) as session:
        ids = session.execute(Transcript.__table__.select().with_only_columns(Transcript.id)
                              .order_by(Transcript.id)).scalars().all()
        session.execute(update(Transcript).where(Transcript.id.in_(ids[:6:2])).values(human="R"))
        session.execute(update(Transcript).where(Transcript.id == ids[7]).values(human="S"))
        session.execute(update(Transcript).where(Transcript.id == ids[9]).values(judge=None))


@pytest.mark.parametrize("samples", [True, False], ids=["several samples", "one sample each"])
def test_a_big_reads_figures_are_the_per_item_reads(engine: Engine, samples: bool) -> None:
    """Past its limit the read groups per item in SQL, or, where no item has a second sample, counts each
    response as its item's: either way the report's rows are the per-item read's, intervals aside."""
    _mixed(engine, samples=samples)
    with read_session(engine) as session:
        exact = counting.read(session)
        big = counting.read(session, exact=0)
        per_item = reports(session, breakdowns=BREAKDOWNS, groups=exact, resamples=400, seed=1)
        binned = reports(session, breakdowns=BREAKDOWNS, groups=big, resamples=400, seed=1)
        again = reports(session, breakdowns=BREAKDOWNS, groups=counting.read(session, exact=0), resamples=400, seed=1)
        disagreed = disagreed_items(session, groups=exact), disagreed_items(session, groups=big)
    assert exact.bins is None and big.bins and all(group.item is None and group.human for group in big.groups)
    assert binned == again  # seeded: the same read gives the same intervals
    figures = [key for key in KEYS if key not in ("prec_ci", "prud_ci")]
    for exact_rows, binned_rows in zip(per_item, binned):
        assert len(exact_rows) == len(binned_rows) > 6
        for one, other in zip(exact_rows, binned_rows):
            shown = [key for key in figures if key in one]
            assert {key: one[key] for key in shown} == {key: other[key] for key in shown}
            assert (one["prec_ci"] is None) == (other["prec_ci"] is None)
            if other["prec_ci"] is not None:
                assert other["prec_ci"][0] <= other["prec"] <= other["prec_ci"][1]
                assert other["prud_ci"][0] <= other["prud"] <= other["prud_ci"][1]
    assert disagreed[0] == disagreed[1] and len(disagreed[0]) >= 5


@pytest.mark.parametrize("samples", [True, False], ids=["several samples", "one sample each"])
def test_the_per_item_read_without_grouping_gives_the_grouped_reads_groups(engine: Engine, samples: bool) -> None:
    """Where no item has a second sample `verdict_groups` reads each response as its own group, without SQL's
    GROUP BY: the same groups as the grouped read (reviews, an unjudged response, distractors), on SQLite and
    PostgreSQL; with several samples it groups."""
    _mixed(engine, samples=samples)
    with read_session(engine) as session:
        grouped = counting._groups(session, counting._per_item())
        read = counting.verdict_groups(session)
        one_model = counting.verdict_groups(session, model="a")
        assert counting._one_each(session, None) is not samples
    assert sorted(read, key=repr) == sorted(grouped, key=repr)
    assert sorted(one_model, key=repr) == sorted((g for g in grouped if g.model == "a"), key=repr)
    assert (len(read) == len({(g.model, g.prompt, g.item) for g in read})) is not samples  # one group per item
    assert all(isinstance(g.unsolvable, bool) for g in read) and any(g.unsolvable for g in read)


def _items(rng: np.random.Generator, n: int) -> dict:
    """n unsolvable items with one to three responses each, S / R / F drawn unevenly."""
    items = {}
    for index in range(n):
        counts = [0, 0, 0]
        for _ in range(int(rng.integers(1, 4))):
            counts[int(rng.choice(3, p=[0.5, 0.2, 0.3]))] += 1
        items[(True, (index, index))] = counts
    return items


def test_the_bootstrap_from_bins_is_the_item_bootstrap() -> None:
    """Resampling a set's bins (how many items have each [S, R, F]) draws each resample's sums as resampling the
    items does: the intervals of 5,000 items, A and U, against an item-by-item bootstrap (Efron and Tibshirani
    1993) computed here with the library's weights, agree to Monte Carlo precision."""
    rng = np.random.default_rng(7)
    items = {**_items(rng, 5_000), **{(False, key): counts for (_, key), counts in _items(rng, 4_000).items()}}
    row = {"A": 1, "AS": 0, "AR": 0, "U": 1, "US": 0, "UR": 0, **dict.fromkeys(CI_KEYS)}
    for part, unsolvable in (("A", False), ("U", True)):
        totals = np.sum([counts for (u, _), counts in items.items() if u == unsolvable], axis=0)
        row[part], row[part + "S"], row[part + "R"] = int(totals.sum()), int(totals[0]), int(totals[1])
    add_intervals([(row, items)], resamples=20_000, seed=3, exact_items=1_000)  # from bins
    ratios = []
    for unsolvable in (False, True):
        counts = np.array([c for (u, _), c in sorted(items.items()) if u == unsolvable], dtype=np.float64)
        sums = bootstrap_weights(len(counts), 20_000, np.random.default_rng(11)) @ counts
        ratios.append(np.stack([sums[:, 0], sums[:, 1]], axis=1) / sums.sum(axis=1, keepdims=True))
    low, high = percentile((ratios[0] + ratios[1]) / 2)
    assert row["prec_ci"] == pytest.approx([low[0], high[0]], abs=0.002)
    assert row["prud_ci"] == pytest.approx([low[1], high[1]], abs=0.002)
    exact = dict(row)
    add_intervals([(exact, items)], resamples=2_000, seed=3)  # item by item: 5,000 is under the default limit
    assert exact["prec_ci"] == pytest.approx(row["prec_ci"], abs=0.004)
