"""Each annotator's accuracy fitted from the stored labels (both databases), written through the label writer: the
same fit as on the labels in memory, gold items anchored, imports and the LLM verifier only when asked, and the
model's estimate of the release's precision."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sqlalchemy import Engine, update

from annotator.accounts import auth
from annotator.accounts.auth import system_annotator_id
from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate
from annotator.figures.agreement import dawid_skene
from annotator.labelling import gold, labels, queue
from annotator.labelling.accuracy import LLM_VERIFIER, fit_from_database, fit_from_frame, label_frame, llm_verdict
from annotator.labelling.labels import LabelRow, record_labels
from annotator.labelling.precision_estimate import estimated_unsolvable_share
from tests.support.candidates import add_candidates, add_user
from tests.support.labels import seed
from tests.support.simulated_team import ACCURACIES, simulate, store


def test_the_fit_from_the_database_is_the_fit_of_its_labels(engine: Engine) -> None:
    truth, frame = simulate(ACCURACIES, 200, seed=4)
    ids, people = store(engine, frame)
    with read_session(engine) as session:
        fitted = fit_from_database(session, resamples=50, seed=1)
    assert fitted is not None
    expected = dawid_skene.fit(dawid_skene.Labels.of(frame["task"].tolist(), frame["worker"].tolist(),
                                                     frame["label"].tolist()))
    assert [row.annotator for row in fitted.annotators] == list(people)
    assert np.allclose([row.accuracy for row in fitted.annotators], expected.accuracy)
    assert [row.items for row in fitted.annotators] == [200] * 5
    assert all(row.accuracy_low < row.accuracy < row.accuracy_high for row in fitted.annotators)
    assert np.abs(np.array([row.accuracy for row in fitted.annotators]) - ACCURACIES).max() < 0.08
    strong = fitted.annotators[0].confusion
    assert strong["true_1"]["said_1"] + strong["true_1"]["said_0"] == pytest.approx(1)
    assert strong["true_1"]["said_1"] > 0.85 and strong["true_0"]["said_0"] > 0.85
    posterior = np.array([fitted.posterior[ids[task]] for task in range(200)])
    assert np.allclose(posterior, expected.posterior[:, 1])
    assert ((posterior > 0.5) == truth).mean() > 0.95
    assert fitted.annotator_ids == people and fitted.labels == len(frame) and fitted.items == 200


def test_gold_items_are_clamped_and_the_llm_verifier_joins_only_when_asked(engine: Engine) -> None:
    truth, frame = simulate((0.9, 0.7, 0.6), 60, seed=8)
    ids, _ = store(engine, frame)
    with write_session(engine) as session:
        for task in range(0, 60, 6):  # the first one's majority says the opposite: the gold label still wins
            gold.mark_gold(session, candidate_id=ids[task], human_check=1 - int(truth[task]) if task == 0
                           else int(truth[task]), difficulty_eval=0 if (task != 0) == bool(truth[task]) else None,
                           created_by=None)
        verdicts = [{"verification": {"verdict": True}, "unsolvable": {"verdict": bool(truth[t])}} for t in range(60)]
        for task, outputs in enumerate(verdicts):
            session.execute(update(Candidate).where(Candidate.id == ids[task]).values(llm_outputs=outputs))
    with read_session(engine) as session:
        plain = fit_from_database(session, resamples=0)
        with_llm = fit_from_database(session, resamples=0, llm_rater=True)
    assert plain is not None and with_llm is not None
    assert plain.gold_items == 10 and plain.posterior[ids[0]] == 1 - int(truth[0])
    assert all(plain.posterior[ids[t]] == truth[t] for t in range(6, 60, 6))
    assert LLM_VERIFIER not in [row.annotator for row in plain.annotators]
    llm = next(row for row in with_llm.annotators if row.annotator == LLM_VERIFIER)
    assert llm.items == 60 and llm.accuracy > 0.9  # it was told the truth
    assert plain.annotators[0].accuracy_low is None


def test_llm_verdicts_read_from_the_pipelines_outputs() -> None:
    assert llm_verdict({"verification": {"verdict": True}, "unsolvable": {"verdict": True}}) == 1
    assert llm_verdict({"verification": {"verdict": True}, "unsolvable": {"verdict": False}}) == 0
    assert llm_verdict({"verification": {"verdict": False}, "unsolvable": {"verdict": None}}) == 0
    assert llm_verdict({"verification": {"verdict": None}, "unsolvable": {"verdict": True}}) is None
    assert llm_verdict(None) is None and llm_verdict({"rewrite": {}}) is None


def test_imports_count_only_when_named_and_no_labels_is_no_fit(engine: Engine) -> None:
    with read_session(engine) as session:
        assert fit_from_database(session) is None
    _, frame = simulate((0.9, 0.8), 20, seed=2)
    ids, _ = store(engine, frame)
    with write_session(engine) as session:
        release = system_annotator_id(session, name="import:reliablemath")
        record_labels(session, rows=[LabelRow(cid, release, 1, 0) for cid in ids])
    with read_session(engine) as session:
        assert [row.annotator for row in fit_from_database(session, resamples=0).annotators] == ["a0", "a1"]
        named = fit_from_database(session, resamples=0, system_annotators=["import:reliablemath"])
    assert [row.annotator for row in named.annotators] == ["a0", "a1", "import:reliablemath"]


def test_the_estimated_unsolvable_share_is_the_mean_posterior_of_the_vetted(engine: Engine) -> None:
    truth, frame = simulate((0.95, 0.85, 0.7), 90, seed=5, unsolvable=0.7)
    ids, _ = store(engine, frame)
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=3)
    with read_session(engine) as session:
        fitted = fit_from_database(session, resamples=0)
    votes = frame.groupby("task")["label"].sum()
    vetted = [ids[task] for task in range(90) if votes[task] >= 2]
    expected = sum(fitted.posterior[i] for i in vetted) / len(vetted)
    estimate = estimated_unsolvable_share(engine)
    assert estimate.candidates == len(vetted) and estimate.without_labels == 0
    assert estimate.share == pytest.approx(expected)
    true_share = float(np.mean([truth[task] for task in range(90) if votes[task] >= 2]))
    assert abs(estimate.share - true_share) < 0.1
    # A candidate decided by a reviewer alone has no label in the model: counted apart, the share unchanged.
    decided = add_candidates(engine, 1, start=1000)[0]
    reviewer = add_user(engine, "rev", role="reviewer").id
    with write_session(engine) as session:
        record_labels(session, rows=[LabelRow(decided, reviewer, 1, 0, decision=True)])
    with read_session(engine) as session:
        again = estimated_unsolvable_share(session, fitted=fitted)
    assert (again.candidates, again.without_labels, again.share) == (len(vetted), 1, estimate.share)


def test_the_fit_from_the_label_frame_is_the_fit_from_the_database(engine: Engine) -> None:
    """The Team page's fit (every person's labels read as arrays, `fit_from_frame`) is `fit_from_database`'s to the
    last digit, gold items and bootstrap included; its posteriors are looked up the same way."""
    truth, frame = simulate(ACCURACIES[:4], 120, seed=12, overlap=0.7)
    ids, _ = store(engine, frame)
    with write_session(engine) as session:
        for task in range(0, 120, 15):
            gold.mark_gold(session, candidate_id=ids[task], human_check=int(truth[task]),
                           difficulty_eval=0 if truth[task] else None, created_by=None)
        importer = system_annotator_id(session, name="import:old.json")
        record_labels(session, rows=[LabelRow(ids[task], importer, 1, 0) for task in range(30)])
    with read_session(engine) as session:
        expected = fit_from_database(session, resamples=25, seed=3)
        fitted = fit_from_frame(session, label_frame(session), resamples=25, seed=3)
    assert expected is not None and fitted is not None
    assert fitted.to_json() == expected.to_json() and fitted.gold_items == 8
    assert fitted.annotator_ids == expected.annotator_ids and "import:old.json" not in fitted.annotator_ids
    assert len(fitted.posterior) == len(expected.posterior) == fitted.items > 100
    assert dict(fitted.posterior) == dict(expected.posterior) and fitted.posterior[ids[0]] == truth[0]


def test_label_frame_holds_label_rows_and_gives_the_same_agreement(engine: Engine) -> None:
    """The Team page's bulk read (COPY on PostgreSQL) is `label_rows` column by column, system annotators left
    out, and the agreement report from it is the one from the rows."""
    from annotator.figures.agreement import label_agreement

    cids, aids = seed(engine, candidates=8, annotators=3)
    rng = random.Random(5)
    with write_session(engine) as session:
        system = auth.system_annotator_id(session, name="import:x.json")
        for cid in cids:
            for aid in (*aids, system):
                if rng.random() < 0.8:
                    check = rng.choice([0, 1])
                    labels.record_label(session, candidate_id=cid, annotator_id=aid, human_check=check,
                                        difficulty_eval=rng.choice([0, 1]) if check else None,
                                        seconds_spent=rng.choice([None, 3.5, 7.0]))
    with read_session(engine) as session:
        rows = labels.label_rows(session)
        frame = label_frame(session)
    assert list(frame.columns) == ["item", "annotator", "human_check", "difficulty_eval", "seconds"]
    as_rows = [(int(i), a, int(c), None if d != d else int(d), None if s != s else float(s))
               for i, a, c, d, s in frame.itertuples(index=False)]
    assert as_rows == rows and "import:x.json" not in {row[1] for row in rows}
    assert label_agreement(frame) == label_agreement(rows)


def test_label_frame_is_in_label_rows_order_with_named_imports_and_compact_columns(engine: Engine) -> None:
    """Labels written in no order (the last candidate first, a person's second label on a candidate later): the
    frame is still by candidate then label, an import joins only when named, a person without labels is absent, and
    no column holds a Python object per label."""
    import numpy as np

    cids, aids = seed(engine, candidates=5, annotators=4)
    with write_session(engine) as session:
        system = auth.system_annotator_id(session, name="import:x.json")
        for cid in reversed(cids):
            for aid in (aids[2], system, aids[0]):
                labels.record_label(session, candidate_id=cid, annotator_id=aid, human_check=int(cid % 2 == 0),
                                    difficulty_eval=0 if cid % 2 == 0 else None, seconds_spent=float(cid))
        labels.record_label(session, candidate_id=cids[1], annotator_id=aids[1], human_check=1, difficulty_eval=1)
    with read_session(engine) as session:
        for named in ((), ("import:x.json",)):
            rows = labels.label_rows(session, system_annotators=named)
            frame = label_frame(session, system_annotators=named)
            as_rows = [(int(i), a, int(c), None if d != d else int(d), None if s != s else float(s))
                       for i, a, c, d, s in frame.itertuples(index=False)]
            assert as_rows == rows and len(rows) == 11 + 5 * len(named)
            assert ("import:x.json" in frame["annotator"].tolist()) == bool(named)
            assert "a3" not in frame["annotator"].tolist()
    assert [row[:2] for row in rows[:4]] == [(cids[0], "a2"), (cids[0], "import:x.json"), (cids[0], "a0"),
                                             (cids[1], "a2")]
    assert frame["annotator"].dtype == "category" and not (frame.dtypes == np.dtype(object)).any()


def test_label_frame_of_one_data_source_and_rewrite_type_holds_label_rows_of_them(engine: Engine) -> None:
    """`agreement --data-source --rewrite-type` reads the frame: the same labels as `label_rows` with the same
    filters, on both databases."""
    ids = {(source, kind): add_candidates(engine, 3, data_source=source, rewrite_types=(kind,), start=start)
           for start, (source, kind) in zip((0, 3, 0), [("amc", "remove"), ("amc", "contradict"), ("aime", "remove")],
                                            strict=True)}
    people = [add_user(engine, name) for name in ("ann", "bea")]
    with write_session(engine) as session:
        for number, cid in enumerate(cid for group in ids.values() for cid in group):
            for person in people[: 1 + number % 2]:
                labels.record_label(session, candidate_id=cid, annotator_id=person.id, human_check=number % 2,
                                    difficulty_eval=None if number % 2 == 0 else 1)
    with read_session(engine) as session:
        for source, kind in [("amc", None), (None, "remove"), ("amc", "remove"), ("gsm", None)]:
            rows = labels.label_rows(session, data_source=source, rewrite_type=kind)
            frame = label_frame(session, data_source=source, rewrite_type=kind)
            as_rows = [(int(i), a, int(c), None if d != d else int(d), None if s != s else float(s))
                       for i, a, c, d, s in frame.itertuples(index=False)]
            expected = {cid for (s, k), group in ids.items() for cid in group
                        if source in (None, s) and kind in (None, k)}
            assert as_rows == rows and {row[0] for row in rows} == expected
