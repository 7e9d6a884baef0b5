"""Precision and Prudence per model and prompt (ReliableMath Section 4, Eq. 1-2; Tables 3 and 6-9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import Engine, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript
from annotator.transcripts.report.scores import KEYS, differs_from_reference, report
from tests.support.judged_answers import TABLE_6
from tests.support.transcripts import import_records, records_for

FIGURES = ("prec_a", "prud_a", "prec_u", "prud_u", "prec", "prud")


def test_table_6_from_its_counts(aime: Engine, tmp_path: Path) -> None:
    """ReliableMath Table 6, reliable prompt, DeepSeek-R1 and GPT-4o: responses with the table's S/R/F counts on
    the release's AIME items, judged on import, give the printed Prec/Prud within 0.0011 (the paper truncates
    some values, e.g. 22/132 printed .166, and rounds others, e.g. 52/132 printed .394)."""
    records = []
    for model, (a, u, _) in TABLE_6.items():
        records += records_for(aime, data_source="aime", model=model, prompt="reliable", a=a, u=u)
    import_records(aime, tmp_path / "table6.jsonl", records)
    with read_session(aime) as session:
        rows = report(session)
    assert [(row["model"], row["data_source"]) for row in rows] == [("DeepSeek-R1", "all"), ("GPT-4o", "all")]
    for row in rows:
        a, u, printed = TABLE_6[row["model"]]
        assert (row["AS"], row["AR"], row["AF"], row["US"], row["UR"], row["UF"]) == (*a, *u)
        assert (row["A"], row["U"]) == (30, 132)
        for name, value in zip(FIGURES, printed):
            assert abs(row[name] - value) <= 0.0011, (row["model"], name, row[name], value)
        assert tuple(row) == KEYS and row["reviewed"] == 0 and row["judge_human_kappa"] is None


def test_breakdowns_keep_the_a_set_of_their_data_source(aime: Engine, tmp_path: Path) -> None:
    records = records_for(aime, data_source="aime", model="m", prompt="standard", a=(10, 5, 15), u=(30, 2, 100))
    import_records(aime, tmp_path / "m.jsonl", records)
    with read_session(aime) as session:
        by_source = report(session, by=["data_source"])
        by_difficulty = report(session, by=["difficulty_eval"], model="m")
        assert report(session, model="other") == []
    assert [row["data_source"] for row in by_source] == ["all", "aime"]
    assert by_source[0] | {"data_source": "aime"} == by_source[1]
    pooled, *split = by_difficulty
    assert pooled["difficulty_eval"] == "all" and [row["difficulty_eval"] for row in split] == [0, 1]
    # The U set splits by difficulty; each row keeps the whole A set, so Prec and Prud stay defined.
    assert sum(row["U"] for row in split) == pooled["U"] == 132
    assert all(row["A"] == 30 and row["prec_a"] == pytest.approx(10 / 30) for row in split)
    assert all(row["prec"] == pytest.approx((row["prec_a"] + row["prec_u"]) / 2) for row in split)
    assert all(row["data_source"] == "all" for row in split)


def test_human_verdicts_override_the_judge_and_kappa_compares_them(aime: Engine, tmp_path: Path) -> None:
    records = records_for(aime, data_source="aime", model="m", prompt="reliable", a=(10, 0, 20), u=(40, 2, 90))
    import_records(aime, tmp_path / "m.jsonl", records)
    with write_session(aime) as session:
        rows = session.execute(select(Transcript.id, Transcript.judge).order_by(Transcript.id)).all()
        # A reviewer looks at 12 responses: agrees with the judge on 8, overrides 4 F into S.
        reviewed = rows[5:17]  # 5 S and 7 F by the judge
        humans = [judge if i < 8 else "S" for i, (_, judge) in enumerate(reviewed)]
        for (transcript_id, _), human in zip(reviewed, humans):
            session.execute(update(Transcript).where(Transcript.id == transcript_id).values(human=human))
    with read_session(aime) as session:
        [row] = report(session)
        assert differs_from_reference(session) == 0
    judges = [judge for _, judge in reviewed]
    overridden = sum(1 for j, h in zip(judges, humans) if j != h and h == "S")
    assert overridden == 4 and row["AS"] == 10 + overridden and row["reviewed"] == 12
    assert 0 < row["judge_human_kappa"] < 1
    assert row["judge_human_kappa"] == pytest.approx(cohen_kappa_score(judges, humans))
