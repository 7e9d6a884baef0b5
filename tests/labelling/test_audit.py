"""The audit: a seeded sample of the vetted set, stratified by data source; reviewers' decisions; the estimate with
its Wilson interval (checked against statsmodels), in the release's manifest and `stats`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, select
from statsmodels.stats.proportion import proportion_confint

from annotator.accounts.auth import AccountDisabled
from annotator.database.engine import read_session, write_session
from annotator.database.models import AuditItem, Candidate
from annotator.figures import stats
from annotator.import_export.exports import export
from annotator.labelling import audit, labels
from tests.support.candidates import add_candidates, add_user

# data source -> vetted candidates (one label human_check 1 each, labels_per_candidate 1)
VETTED = {"aime": 30, "amc": 15, "minerva": 5}


def _project(engine: Engine) -> dict[str, int]:
    """Vetted candidates per `VETTED`, plus a rejected one, an unlabelled one and a vetted distractor (solvable by
    design: never released, never drawn); the ids of a reviewer, an admin and an annotator."""
    people = {"rev": add_user(engine, "rev", role="reviewer").id, "boss": add_user(engine, "boss", role="admin").id,
              "ann": add_user(engine, "ann").id}
    ids = {source: add_candidates(engine, count + 2, data_source=source, rewrite_types=("remove",))
           for source, count in VETTED.items()}
    distractor = add_candidates(engine, 1, data_source="gsm", rewrite_types=("distractor",))
    rows = [labels.LabelRow(cid, people["ann"], 1, 0) for source, count in VETTED.items()
            for cid in ids[source][:count]]
    rows += [labels.LabelRow(ids["aime"][-2], people["ann"], 0, None),
             labels.LabelRow(distractor[0], people["ann"], 1, 0)]
    with write_session(engine) as session:
        labels.record_labels(session, rows=rows)
    return people


def _sample(engine: Engine) -> list[tuple[str, str]]:
    """The audit sample's (data_source, data_id) in its order."""
    with read_session(engine) as session:
        return [(row["data_source"], row["data_id"]) for row in audit.sample_rows(session)]


@pytest.mark.parametrize(("counts", "size", "expected"), [
    ({"aime": 60, "amc": 30, "math": 9, "minerva": 1}, 20, {"aime": 12, "amc": 6, "math": 1, "minerva": 1}),
    # The floors of one go over: taken back from the largest, ties by name.
    ({"aime": 60, "amc": 30, "math": 9, "minerva": 1}, 10, {"aime": 5, "amc": 3, "math": 1, "minerva": 1}),
    # What rounding leaves goes to the largest remainders.
    ({"a": 5, "b": 5, "c": 5}, 7, {"a": 3, "b": 2, "c": 2}),
    ({"a": 3, "b": 0}, 10, {"a": 3}),  # more asked than there are: all of them
])
def test_allocation_is_proportional_with_one_per_source(counts: dict[str, int], size: int,
                                                        expected: dict[str, int]) -> None:
    assert audit.allocate(counts, size) == expected


@given(st.dictionaries(st.sampled_from("abcdefg"), st.integers(0, 200), min_size=1), st.integers(1, 400))
def test_any_allocation_fills_the_size_within_each_source(counts: dict[str, int], size: int) -> None:
    non_empty = {source: count for source, count in counts.items() if count}
    if size < len(non_empty):
        with pytest.raises(audit.AuditError, match="at least"):
            audit.allocate(counts, size)
        return
    chosen = audit.allocate(counts, size)
    assert set(chosen) == set(non_empty)
    assert sum(chosen.values()) == min(size, sum(non_empty.values()))
    assert all(1 <= chosen[source] <= count for source, count in non_empty.items())
    total = sum(non_empty.values())
    if size < total:  # within one of its share, and of one more for each source held up to one
        lifted = sum(1 for n in non_empty.values() if size * n / total < 1)
        assert all(abs(chosen[s] - size * n / total) < 1 + lifted for s, n in non_empty.items())


def test_a_sample_is_stratified_seeded_and_stored(engine: Engine) -> None:
    people = _project(engine)
    with write_session(engine) as session:
        drawn = audit.draw(session, size=10, seed=7, drawn_by=people["rev"])
    assert drawn["per_source"] == {"aime": 6, "amc": 3, "minerva": 1} and drawn["drawn"] == 10
    first = _sample(engine)
    assert sorted({source for source, _ in first}) == ["aime", "amc", "minerva"]
    with read_session(engine) as session:
        released = set(session.execute(select(Candidate.data_id).where(audit.released(session))).scalars())
        estimate = audit.estimate(session)
    assert {data_id for _, data_id in first} <= released and len(set(first)) == 10
    assert estimate["status"] == audit.NOT_AUDITED and estimate["interval"] is None
    assert estimate["sample"]["seed"] == 7 and estimate["sample"]["drawn_by"] == "rev"
    assert estimate["sample"]["vetted"] == 50 and estimate["drawn"] == 10
    assert "not audited yet (10 drawn by rev" in audit.describe(estimate)

    with write_session(engine) as session, pytest.raises(audit.AuditError, match="already drawn"):
        audit.draw(session, size=10, seed=7, drawn_by=people["rev"])
    with write_session(engine) as session:
        audit.draw(session, size=10, seed=7, drawn_by=people["boss"], again=True)
    assert _sample(engine) == first  # the same seed: the same candidates in the same order
    with write_session(engine) as session:
        audit.draw(session, size=10, seed=8, drawn_by=people["rev"], again=True)
    assert {d for _, d in _sample(engine)} != {d for _, d in first}


def test_only_reviewers_and_admins_audit_and_bad_sizes_are_refused(engine: Engine) -> None:
    people = _project(engine)
    with write_session(engine) as session, pytest.raises(AccountDisabled):
        audit.draw(session, size=5, seed=1, drawn_by=people["ann"])
    with write_session(engine) as session, pytest.raises(audit.AuditError, match="one candidate of each of the 3"):
        audit.draw(session, size=2, seed=1, drawn_by=people["rev"])
    with write_session(engine) as session, pytest.raises(audit.AuditError, match="no audit sample"):
        audit.decide(session, candidate_id=1, reviewer_id=people["rev"], unsolvable=1)
    with read_session(engine) as session:
        assert audit.current_sample(session) is None and audit.estimate(session)["sample"] is None


def test_decisions_give_the_wilson_interval_in_the_manifest_and_stats(engine: Engine, tmp_path: Path) -> None:
    people = _project(engine)
    with write_session(engine) as session:
        audit.draw(session, size=20, seed=3, drawn_by=people["rev"])
    order = _sample(engine)
    with read_session(engine) as session:
        ids = dict(session.execute(select(Candidate.data_id, Candidate.id)).all())
    # 12 audited: the first 9 truly unsolvable, then 3 not.
    with write_session(engine) as session:
        for index, (_, data_id) in enumerate(order[:12]):
            audit.decide(session, candidate_id=ids[data_id], reviewer_id=people["rev"], unsolvable=int(index < 9),
                         comment="still solvable: x is fixed by the second sentence" if index >= 9 else None)
    with write_session(engine) as session:
        with pytest.raises(audit.AuditedMeanwhile, match="rev audited this candidate meanwhile: truly unsolvable"):
            audit.decide(session, candidate_id=ids[order[0][1]], reviewer_id=people["boss"], unsolvable=0)
        with pytest.raises(audit.AuditError, match="not in the audit sample"):
            audit.decide(session, candidate_id=ids["aime_31_remove_1"], reviewer_id=people["rev"], unsolvable=1)
        with pytest.raises(audit.AuditError, match="1 .truly unsolvable. or 0"):
            audit.decide(session, candidate_id=ids[order[13][1]], reviewer_id=people["rev"], unsolvable=2)
        assert audit.next_to_audit(session) == ids[order[12][1]]
        assert audit.next_to_audit(session, exclude=[ids[order[12][1]]]) == ids[order[13][1]]
        assert audit.left_to_audit(session) == 8

    manifest = export("reliablemath", tmp_path / "release", engine=engine)
    estimate = manifest["audit"]
    low, high = proportion_confint(9, 12, alpha=0.05, method="wilson")
    assert estimate["status"] == "audited" and (estimate["unsolvable"], estimate["audited"]) == (9, 12)
    assert estimate["unsolvable_share"] == pytest.approx(0.75)
    assert estimate["interval"] == [pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12)]
    assert estimate["model_estimate"]["method"] == "dawid-skene mean posterior" and estimate["sample"]["seed"] == 3
    per_source = estimate["per_source"]
    assert sum(entry["audited"] for entry in per_source.values()) == 12
    assert {source: entry["drawn"] for source, entry in per_source.items()} == {"aime": 12, "amc": 6, "minerva": 2}
    with read_session(engine) as session:
        assert stats.compute(session)["audit"] == estimate
        assert "0.750 truly unsolvable (95% Wilson interval" in stats.to_text(stats.compute(session))

    # A sampled candidate relabelled out of the vetted set no longer counts, audited or not.
    with write_session(engine) as session:
        labels.record_label(session, candidate_id=ids[order[11][1]], annotator_id=people["ann"], human_check=0,
                            difficulty_eval=None)
        audit.decide(session, candidate_id=ids[order[0][1]], reviewer_id=people["boss"], unsolvable=0, replace=True)
    with read_session(engine) as session:
        after = audit.estimate(session)
        kept = session.execute(select(AuditItem.unsolvable, AuditItem.comment)
                               .where(AuditItem.candidate_id == ids[order[10][1]])).one()
    assert (after["unsolvable"], after["audited"], after["no_longer_vetted"]) == (8, 11, 1)
    assert tuple(kept) == (0, "still solvable: x is fixed by the second sentence")


def test_the_audit_export_writes_the_sample_and_its_decisions(engine: Engine, tmp_path: Path) -> None:
    import json

    people = _project(engine)
    with read_session(engine) as session:
        from annotator.import_export.exports import nothing_to_write

        assert nothing_to_write(session, "audit") == "no audit sample is drawn (audit draw)"
    with write_session(engine) as session:
        audit.draw(session, size=5, seed=11, drawn_by=people["boss"])
    first = _sample(engine)[0][1]
    with write_session(engine) as session:
        candidate_id = session.execute(select(Candidate.id).where(Candidate.data_id == first)).scalar_one()
        audit.decide(session, candidate_id=candidate_id, reviewer_id=people["rev"], unsolvable=0,
                     comment='=HYPERLINK("x") still solvable')
    manifest = export("audit", tmp_path / "audit", engine=engine, options={"file_format": "jsonl"})
    rows = [json.loads(line) for line in (tmp_path / "audit" / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert manifest["files"]["audit.jsonl"]["records"] == 5 and len(rows) == 5
    assert (rows[0]["data_id"], rows[0]["unsolvable"], rows[0]["audited_by"], rows[0]["comment"]) == (
        first, 0, "rev", '=HYPERLINK("x") still solvable')
    assert [row["position"] for row in rows] == list(range(5)) and {row["seed"] for row in rows} == {11}
    assert all(row["unsolvable"] is None for row in rows[1:]) and rows[1]["drawn_by"] == "boss"
    assert manifest["audit"]["unsolvable_share"] == 0.0 and manifest["audit"]["audited"] == 1


def test_a_model_based_estimate_is_said_beside_the_audit_when_there_is_one() -> None:
    estimate = {"status": audit.AUDITED, "unsolvable_share": 0.75, "interval": [0.5, 0.9], "audited": 4,
                "unsolvable": 3, "drawn": 5, "no_longer_vetted": 0,
                "sample": {"drawn_by": "rev", "drawn_at": "2026-01-02T03:04:05+00:00", "seed": 9},
                "model_estimate": None}
    assert audit.describe(estimate) == ("0.750 truly unsolvable (95% Wilson interval 0.500 to 0.900): 3 of 4 audited; "
                                        "5 drawn by rev on 2026-01-02, seed 9")
    estimate["model_estimate"] = {"unsolvable_share": 0.91, "interval": [0.88, 0.93], "method": "dawid-skene"}
    assert audit.describe(estimate).endswith("seed 9; model-based estimate 0.910 (0.880 to 0.930)")


def test_beside_an_audit_the_model_estimate_is_the_mean_posterior_of_the_vetted(engine: Engine) -> None:
    """Once a sample is drawn, the estimate carries the Dawid-Skene share of the same vetted set
    (`precision_estimate`), and `describe` says it beside the audit's figure."""
    from annotator.labelling import queue
    from annotator.labelling.precision_estimate import estimated_unsolvable_share
    from tests.support.simulated_team import simulate, store

    _, frame = simulate((0.95, 0.85, 0.7), 60, seed=8, unsolvable=0.7)
    store(engine, frame)
    rev = add_user(engine, "rev", role="reviewer").id
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=3)
    with read_session(engine) as session:
        assert audit.estimate(session)["model_estimate"] is None  # no sample: the model is not fitted
    with write_session(engine) as session:
        audit.draw(session, size=5, seed=2, drawn_by=rev)
        audit.decide(session, candidate_id=audit.next_to_audit(session), reviewer_id=rev, unsolvable=1)
    with read_session(engine) as session:
        found = audit.estimate(session)
        expected = estimated_unsolvable_share(session)
    model = found["model_estimate"]
    assert expected.share is not None and 0.5 < expected.share <= 1
    assert model["unsolvable_share"] == pytest.approx(expected.share)
    assert (model["candidates"], model["without_labels"]) == (expected.candidates, expected.without_labels)
    assert audit.describe(found).endswith(f"; model-based estimate {expected.share:.3f}")
