"""The slow pages' figures as data (`annotator.figures.pages`): computed from a real database, stored as JSON and read
back equal, so that every app server shows the same figures as the one that computed them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sqlalchemy import Engine, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript
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


@pytest.mark.parametrize("kind", [figures.OVERVIEW, figures.TEAM, figures.REPORT, figures.JUDGES],
                         ids=lambda kind: kind.key)
def test_figures_read_back_from_json_equal_the_computed_ones(engine: Engine, kind: figures.Figures) -> None:
    _labelled(engine)
    _transcripts(engine)
    with read_session(engine) as session:
        computed = kind.compute(session)
    # Figures with content: people and pairs, rows and disagreed items, judges with reviewed responses.
    assert {"overview": lambda: computed["stats"]["total"]["checked"] and computed["progress"]["per_day"],
            "team": lambda: computed["activity"] and computed["agreement"]["human_check"]["pairwise"],
            "report": lambda: computed["by_source"] and computed["disagreed"] and computed["tags"],
            "report_judges": lambda: all(row["reviewed"] == 3 for row in computed)}[kind.key]()
    text = kind.to_json(computed)
    assert kind.from_json(text) == computed
    assert kind.from_json(kind.to_json(kind.from_json(text))) == computed


def test_team_figures_name_the_people_and_their_agreement(engine: Engine) -> None:
    _labelled(engine)
    with read_session(engine) as session:
        team = figures.TEAM.from_json(figures.TEAM.to_json(figures.TEAM.compute(session)))
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
