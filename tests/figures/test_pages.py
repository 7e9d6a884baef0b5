"""The slow pages' figures as data (`annotator.figures.pages`): computed from a real database, stored as JSON and read
back equal, so that every app server shows the same figures as the one that computed them."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, select, update
from sqlmodel import Session

from annotator.database.engine import read_session, write_session
from annotator.database.models import Annotation, Annotator, GoldLabel, Transcript
from annotator.figures import pages as figures
from annotator.labelling import gold, labels
from tests.support.candidates import add_candidates, add_user
from tests.support.transcripts import add_transcripts


def _labelled(engine: Engine) -> None:
    ids = add_candidates(engine, 6)
    people = [add_user(engine, name) for name in ("ann", "bea", "cat")]
    with write_session(engine) as session:
        gold.mark_gold(session, candidate_id=ids[0], human_check=1, difficulty_eval=0, created_by=None)
        for n, person in enumerate(people):
            for i, candidate_id in enumerate(ids):
                check = (i + n) % 3 != 0
                labels.record_label(session, candidate_id=candidate_id, annotator_id=person.id, human_check=int(check),
                                    difficulty_eval=(i % 2) if check else None, seconds_spent=10.0 + i)


def _transcripts(engine: Engine) -> None:
    """Model m-a's responses to four unsolvable items and a solvable one, three reviewed and tagged; m-b answers the
    same items, differently on half of them (items the models disagree on)."""
    specs = [{"judge_class": judge_class} for judge_class in ("unsolvable", "unknown", "incorrect", "correct")]
    ids = add_transcripts(engine, [*specs, {"solvable": True, "judge_class": "correct", "judge": "S"}], start=100)
    with write_session(engine) as session:
        session.execute(update(Transcript).where(Transcript.id.in_(ids[:3])).values(human="S", tags=["guess"]))
        rows = session.execute(select(Transcript).where(Transcript.id.in_(ids))).scalars().all()
        flipped = {"S": "F", "R": "S", "F": "F"}
        session.add_all([
            Transcript(**{**row.model_dump(exclude={"id", "human", "tags"}), "model": "m-b",
                          "judge": flipped[row.judge] if i % 2 == 0 else row.judge})
            for i, row in enumerate(rows)
        ])


@pytest.mark.parametrize("kind", [figures.OVERVIEW, figures.TEAM, figures.TEAM_AGREEMENT, figures.REPORT,
                                  figures.JUDGES],
                         ids=lambda kind: kind.key)
def test_figures_read_back_from_json_equal_the_computed_ones(engine: Engine, kind: figures.Figures) -> None:
    _labelled(engine)
    _transcripts(engine)
    with read_session(engine) as session:
        computed = kind.compute(session)
    # Figures with content: people and pairs, rows and disagreed items, judges with reviewed responses.
    assert {"overview": lambda: computed["stats"]["total"]["checked"] and computed["progress"]["per_day"],
            "team": lambda: computed["activity"] and computed["gold"],
            "team_agreement": lambda: computed["agreement"]["human_check"]["pairwise"] and computed["accuracy"],
            "report": lambda: computed["by_source"] and computed["disagreed"] and computed["tags"],
            "report_judges": lambda: all(row["reviewed"] == 3 for row in computed)}[kind.key]()
    text = kind.to_json(computed)
    assert kind.from_json(text) == computed
    assert kind.from_json(kind.to_json(kind.from_json(text))) == computed


def test_team_figures_name_the_people_and_their_agreement(engine: Engine) -> None:
    _labelled(engine)
    with read_session(engine) as session:
        team = figures.TEAM.from_json(figures.TEAM.to_json(figures.TEAM.compute(session)))
        agreement = figures.TEAM_AGREEMENT
        team |= agreement.from_json(agreement.to_json(agreement.compute(session)))
    assert sorted(team["activity"]) == ["ann", "bea", "cat"] and team["activity"]["ann"]["labels"] == 6
    assert team["agreement"]["human_check"]["items"] == 6 and set(team["gold"]) == {"ann", "bea", "cat"}
    accuracy = {row["annotator"]: row for row in team["accuracy"]["annotators"]}
    assert set(accuracy) == {"ann", "bea", "cat"} and {row["items"] for row in accuracy.values()} == {6}
    assert all(row["accuracy_low"] <= row["accuracy"] <= row["accuracy_high"] for row in accuracy.values())


def test_numpy_numbers_become_numbers_and_nan_survives_but_other_objects_are_refused() -> None:
    text = figures.TEAM.to_json({"kappa": np.float64(0.5), "items": np.int64(3), "alpha": float("nan")})
    back = json.loads(text)
    assert back["kappa"] == 0.5 and back["items"] == 3 and math.isnan(back["alpha"])
    with pytest.raises(TypeError, match="the team figures hold a set, which JSON cannot store"):
        figures.TEAM.to_json({"names": {"ann"}})


def _old_gold_accuracy(session: Session) -> dict[str, dict[str, Any]]:
    """Gold accuracy counted label by label in Python, as the Team page's figures were: the reference."""
    rows = session.execute(
        select(Annotator.name, Annotation.human_check, Annotation.difficulty_eval, GoldLabel.human_check,
               GoldLabel.difficulty_eval)
        .join(GoldLabel, GoldLabel.candidate_id == Annotation.candidate_id)
        .join(Annotator, Annotator.id == Annotation.annotator_id)
    )
    result: dict[str, dict[str, Any]] = {}
    for name, check, difficulty, gold_check, gold_difficulty in rows:
        person = result.setdefault(name, {"gold_items": 0, "gold_correct": 0})
        person["gold_items"] += 1
        person["gold_correct"] += int((check, difficulty) == (gold_check, gold_difficulty))
    for person in result.values():
        person["gold_accuracy"] = person["gold_correct"] / person["gold_items"]
    return result


def _old_team(session: Session) -> dict[str, Any]:
    """The Team page's figures as one computation reading the labels as Python rows for Dawid-Skene
    (`fit_from_database`) and gold accuracy row by row: what the split, bulk computation must equal."""
    from annotator.figures.agreement import label_agreement
    from annotator.labelling import accuracy

    on_gold = _old_gold_accuracy(session)
    report = label_agreement(labels.label_rows(session),
                             gold={name: person["gold_accuracy"] for name, person in on_gold.items()})
    fitted = accuracy.fit_from_database(session, resamples=None)
    return {"agreement": report, "activity": labels.activity(session), "gold": on_gold,
            "accuracy": None if fitted is None else fitted.to_json()}


LABEL = st.sampled_from([(0, None), (1, 0), (1, 1)])  # (human_check, difficulty_eval)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(marks=st.dictionaries(st.tuples(st.integers(0, 7), st.integers(0, 3)),
                             st.tuples(LABEL, st.one_of(st.none(), st.floats(1, 90))), min_size=1, max_size=32),
       gold_items=st.dictionaries(st.integers(0, 7), LABEL, max_size=4))
def test_team_figures_equal_the_label_by_label_computation(engine: Engine, marks, gold_items) -> None:  # type: ignore[no-untyped-def]
    ids, people = _made(engine)
    with write_session(engine) as session:
        for table in (GoldLabel, Annotation):  # the events are append-only; no figure reads them
            session.execute(delete(table))
        for item, (check, difficulty) in gold_items.items():
            gold.mark_gold(session, candidate_id=ids[item], human_check=check, difficulty_eval=difficulty,
                           created_by=None)
        for (item, who), ((check, difficulty), seconds) in marks.items():
            labels.record_label(session, candidate_id=ids[item], annotator_id=people[who], human_check=check,
                                difficulty_eval=difficulty, seconds_spent=seconds)
    with read_session(engine) as session:
        old = _old_team(session)
        new = figures.TEAM.compute(session) | figures.TEAM_AGREEMENT.compute(session)
    assert new["activity"] and new["accuracy"]  # figures with content, compared whole (NaN as text, keys sorted)
    assert _text(new) == _text(old)


def _text(figures_: dict[str, Any]) -> str:
    return json.dumps(json.loads(figures.TEAM.to_json(figures_)), sort_keys=True)


_people: dict[str, tuple[list[int], list[int]]] = {}


def _made(engine: Engine) -> tuple[list[int], list[int]]:
    """Eight candidates and four annotators' ids, made once per database (hypothesis runs the test many times)."""
    key = str(engine.url)
    if key not in _people:
        _people[key] = (add_candidates(engine, 8), [add_user(engine, name).id for name in ("ann", "bea", "cat", "dan")])
    return _people[key]
