"""Where models hallucinate: Prec and Prud by rewrite type and by difficulty_eval with their
intervals (ReliableMath Section 2.2, Eq. 1-2; Section 4.2, Fig. 5 splits Prec(U) the same two ways), and the
items the models disagree on most, on hand-built transcripts whose figures are worked out by hand below."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, insert, select, update
from statsmodels.stats.proportion import proportion_confint

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript, utcnow
from annotator.transcripts.report.counting import verdict_groups
from annotator.transcripts.report.disagreed import disagreed_items, disagreement, item_transcripts, verdict_text
from annotator.transcripts.report.scores import report, reports
from tests.support.judged_answers import TABLE, add_answers


def test_disagreement_by_hand() -> None:
    """The share of model pairs whose verdicts differ, a model's responses drawn at random."""
    assert disagreement([[1, 0, 0], [1, 0, 0], [0, 0, 1]]) == pytest.approx(2 / 3)  # S S F: 2 of 3 pairs
    assert disagreement([[1, 0, 0], [0, 1, 0], [0, 0, 1]]) == pytest.approx(1.0)  # S R F: every pair
    assert disagreement([[0, 0, 1], [1, 0, 0]]) == pytest.approx(1.0)
    assert disagreement([[1, 0, 0], [1, 0, 0], [1, 0, 0]]) == 0.0
    # S S F R: pairs differ except (S, S): 5 of 6.
    assert disagreement([[1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]]) == pytest.approx(5 / 6)
    # Samples: {S, F} against {S}: S-S agrees half the time: 1/2. Each model counts once however many samples:
    # {S x3, F} against {S}: 3/4 agree, 1/4 differ.
    assert disagreement([[1, 0, 1], [1, 0, 0]]) == pytest.approx(0.5)
    assert disagreement([[3, 0, 1], [1, 0, 0]]) == pytest.approx(0.25)
    assert disagreement([[30, 0, 10], [1, 0, 0]]) == pytest.approx(0.25)
    assert disagreement([[1, 0, 0]]) is None and disagreement([[1, 0, 0], [0, 0, 0]]) is None  # one model
    assert (verdict_text([0, 1, 0]), verdict_text([2, 0, 1])) == ("R", "S 2 · F 1")


def test_the_most_disagreed_items_by_hand(engine: Engine) -> None:
    data_ids = add_answers(engine, TABLE, solvable=frozenset({6}))
    with read_session(engine) as session:
        rows = disagreed_items(session)
        top_two = disagreed_items(session, limit=2)
    # 1 with 3 models before 1 with 2; the two 2/3s by data_id (math_2_remove_1 < math_6); then 1/2.
    assert [row["data_id"] for row in rows] == [data_ids[i] for i in (0, 4, 2, 6, 3)]
    assert [row["disagreement"] for row in rows] == pytest.approx([1, 1, 2 / 3, 2 / 3, 1 / 2])
    assert [row["models"] for row in rows] == [3, 2, 3, 3, 2]
    assert rows[0]["verdicts"] == {"a": {"S": 1, "R": 0, "F": 0}, "b": {"S": 0, "R": 1, "F": 0},
                                   "c": {"S": 0, "R": 0, "F": 1}}
    assert rows[4]["verdicts"]["a"] == {"S": 1, "R": 0, "F": 1}
    assert (rows[0]["rewrite_type"], rows[0]["unsolvable"], rows[0]["candidate_id"] is not None) == (
        "remove", True, True)
    assert (rows[3]["rewrite_type"], rows[3]["unsolvable"], rows[3]["candidate_id"]) == (None, False, None)
    assert top_two == rows[:2]


def test_reviews_count_and_prompts_are_apart(engine: Engine) -> None:
    """The effective verdict counts (a reviewer's F makes item 1's b disagree); the same item under another
    prompt is another entry; an item no one judged yet counts nowhere."""
    data_ids = add_answers(engine, TABLE[:2])
    with write_session(engine) as session:
        session.execute(update(Transcript).where(Transcript.data_id == data_ids[1], Transcript.model == "b")
                        .values(human="S"))
        problem_id, candidate_id = session.execute(select(Transcript.problem_id, Transcript.candidate_id)
                                                   .where(Transcript.data_id == data_ids[0])).first()
        now = utcnow()
        session.execute(insert(Transcript), [
            {"data_id": data_ids[0], "problem_id": problem_id, "candidate_id": candidate_id, "model": model,
             "prompt": "reliable", "sample": 0, "response": "x", "judge": judge, "source": "test", "created_at": now}
            for model, judge in (("a", "R"), ("b", "S"), ("c", None))])
    with read_session(engine) as session:
        rows = disagreed_items(session)
    assert [(row["data_id"], row["prompt"]) for row in rows] == [
        (data_ids[0], "standard"), (data_ids[0], "reliable"), (data_ids[1], "standard")]
    assert [row["models"] for row in rows] == [3, 2, 3]
    assert rows[2]["disagreement"] == pytest.approx(2 / 3) and rows[2]["verdicts"]["b"]["S"] == 1


def test_item_transcripts_side_by_side(engine: Engine) -> None:
    data_ids = add_answers(engine, TABLE, solvable=frozenset({6}))
    with read_session(engine) as session:
        rows = disagreed_items(session)
        opened = item_transcripts(session, problem_id=rows[4]["problem_id"], candidate_id=rows[4]["candidate_id"],
                                  prompt="standard")
        solvable = item_transcripts(session, problem_id=rows[3]["problem_id"], candidate_id=None, prompt="standard")
        assert item_transcripts(session, problem_id=rows[4]["problem_id"], candidate_id=rows[4]["candidate_id"],
                                prompt="reliable") is None
    assert opened["data_id"] == data_ids[3] and list(opened["models"]) == ["a", "b"]
    assert [(t["sample"], t["verdict"]) for t in opened["models"]["a"]] == [(0, "S"), (1, "F")]
    assert opened["models"]["b"][0]["response"].startswith(f"b on {data_ids[3]}, sample 0: <script>")
    assert opened["item"]["rewritten_question"] and opened["item"]["rewrite_type"] == "contradict"
    # The solvable problem's transcripts only, not those of its candidate.
    assert solvable["data_id"] == data_ids[6] and solvable["item"]["rewrite_type"] is None
    assert {model: [t["verdict"] for t in ts] for model, ts in solvable["models"].items()} == {
        "a": ["S"], "b": ["F"], "c": ["S"]}


def test_prec_and_prud_by_rewrite_type_and_difficulty_by_hand(engine: Engine) -> None:
    """One model: solvable items S, F (Prec(A) = 1/2, Prud(A) = 0: Eq. 1-2); remove items S, S, F (Prec(U) 2/3)
    and contradict items R, F, F (Prec(U) 0, Prud(U) 1/3). Each breakdown row keeps the whole A set, so
    remove: Prec = (1/2 + 2/3) / 2 = 7/12, Prud = 0; contradict: Prec = 1/4, Prud = (0 + 1/3) / 2 = 1/6.
    By difficulty_eval (`levels`): simple items S, R, F; hard items S, F, F (Prec(U) 1/3)."""
    verdicts = ["S", "R", "S", "F", "F", "F", "S", "F"]  # items 0-5 alternate remove, contradict; 6, 7 solvable
    levels = (0, 0, 1, 1, 1, 0)  # simple: S (remove), R (contradict), F (contradict); hard: S, F, F
    add_answers(engine, [{"m": v} for v in verdicts], solvable=frozenset({6, 7}), difficulty=levels)
    with read_session(engine) as session:
        groups = verdict_groups(session)
        by_type = report(session, by=["rewrite_type"], groups=groups, resamples=500)
        by_level = report(session, by=["difficulty_eval"], groups=groups, resamples=500)
    pooled, *types = by_type
    assert pooled["rewrite_type"] == "all" and [row["rewrite_type"] for row in types] == ["contradict", "remove"]
    contradict, remove = types
    assert (remove["A"], remove["AS"], remove["U"], remove["US"], remove["UR"]) == (2, 1, 3, 2, 0)
    assert (remove["prec"], remove["prud"]) == (pytest.approx(7 / 12), 0)
    assert (contradict["U"], contradict["US"], contradict["UR"]) == (3, 0, 1)
    assert (contradict["prec"], contradict["prud"]) == (pytest.approx(1 / 4), pytest.approx(1 / 6))
    simple, hard = by_level[1:]
    assert (simple["difficulty_eval"], simple["US"], simple["UR"], simple["UF"]) == (0, 1, 1, 1)
    assert (hard["difficulty_eval"], hard["US"], hard["UR"], hard["UF"]) == (1, 1, 0, 2)
    assert (hard["prec_u"], hard["prec"]) == (pytest.approx(1 / 3), pytest.approx((1 / 2 + 1 / 3) / 2))
    for row in [*types, *by_level[1:]]:
        # Wilson (1927) for the four proportions, against statsmodels.
        for name, k, n in (("prec_u", "US", "U"), ("prud_u", "UR", "U"), ("prec_a", "AS", "A")):
            assert row[name + "_ci"] == pytest.approx(proportion_confint(row[k], row[n], method="wilson"), abs=1e-12)
        # One response per item: MOVER over the A and U parts' Wilson intervals (Zou and Donner 2008).
        assert row["ci_method"] == "mover-wilson"
        for name, k in (("prec", "S"), ("prud", "R")):
            (la, ua), (lu, uu) = (proportion_confint(row[part + k], row[part], method="wilson") for part in "AU")
            a, u = row[f"{name}_a"], row[f"{name}_u"]
            low, high = row[name + "_ci"]
            assert low == pytest.approx(row[name] - ((a - la) ** 2 + (u - lu) ** 2) ** 0.5 / 2, abs=1e-12)
            assert high == pytest.approx(row[name] + ((ua - a) ** 2 + (uu - u) ** 2) ** 0.5 / 2, abs=1e-12)
            assert low <= row[name] < high


def test_several_breakdowns_from_one_bootstrap_are_each_breakdown_alone(engine: Engine) -> None:
    """`scores.reports` (the Report page's one read and one bootstrap) gives every row exactly as `report` gives
    it alone; a breakdown by two fields splits the same counts (one data source here: its rows are the
    rewrite type's)."""
    verdicts = ["S", "R", "S", "F", "F", "F", "S", "F"]
    add_answers(engine, [{"m": v, "n": "F" if v == "S" else "S"} for v in verdicts], solvable=frozenset({6, 7}),
                difficulty=(0, 0, 1, 1, 1, 0))
    breakdowns = [["data_source"], ["rewrite_type"], ["difficulty_eval"], ["data_source", "rewrite_type"]]
    with read_session(engine) as session:
        together = reports(session, breakdowns=breakdowns, resamples=300, seed=3)
        alone = [report(session, by=by, resamples=300, seed=3) for by in breakdowns]
    assert together == alone
    by_type, by_both = together[1], together[3]
    split = [row for row in by_both if row["data_source"] == "math" and row["rewrite_type"] != "all"]
    assert [(row["model"], row["rewrite_type"], row["US"], row["UR"], row["UF"], row["AS"], row["AF"])
            for row in split] == [(row["model"], row["rewrite_type"], row["US"], row["UR"], row["UF"], row["AS"],
                                   row["AF"]) for row in by_type if row["rewrite_type"] != "all"]
    assert [(row["model"], row["rewrite_type"], row["US"]) for row in split] == [
        ("m", "contradict", 0), ("m", "remove", 2), ("n", "contradict", 3), ("n", "remove", 1)]
