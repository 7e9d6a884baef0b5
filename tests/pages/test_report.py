"""The Report page (AppTest, real SQLite file): the paper's layout (ReliableMath Tables 3, 6-9), the reliability
plot, Prec(U) by difficulty and judge-human agreement, for reviewers and admins only."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import Engine, select, update
from statsmodels.stats.proportion import proportion_confint
from streamlit.testing.v1 import AppTest

from annotator.database.engine import write_session
from annotator.database.models import Transcript
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from tests.support.pages import open_page
from tests.support.transcripts import import_records, records_for
from ui.markdown import escape_markdown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "report.py")


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _open(engine: Engine, name: str, role: str) -> AppTest:
    return open_page("report", engine, name=name, role=role)


def test_reviewers_see_table_6_plots_and_agreement(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="DeepSeek-R1", prompt="reliable", a=(21, 0, 9),
                          u=(52, 3, 77))
    records += records_for(engine, data_source="aime", model="GPT-4o", prompt="reliable", a=(3, 0, 27),
                           u=(22, 5, 105))
    import_records(engine, tmp_path / "t.jsonl", records)
    with write_session(engine) as session:
        ids = session.execute(select(Transcript.id).order_by(Transcript.id).limit(4)).scalars().all()
        session.execute(update(Transcript).where(Transcript.id.in_(ids)).values(human="S"))
    app = _open(engine, "rev", "reviewer")
    assert not app.exception, app.exception
    table = app.dataframe[0].value.set_index("model")
    assert table.loc["DeepSeek-R1", "A S/R/F"] == "21/0/9" and table.loc["DeepSeek-R1", "U S/R/F"] == "52/3/77"
    assert table.loc["GPT-4o", "U S/R/F"] == "22/5/105"
    assert abs(table.loc["DeepSeek-R1", "Prec"] - 0.547) <= 0.0011
    assert abs(table.loc["GPT-4o", "Prud"] - 0.019) <= 0.0011
    plot, by_type, by_difficulty = app.get("vega_lite_chart")
    assert '"Prud"' in plot.proto.spec and '"point"' in plot.proto.spec
    _shows_intervals(app, table, plot.proto.spec)
    assert '"rewrite_type"' in by_type.proto.spec and '"difficulty_eval"' in by_difficulty.proto.spec
    metrics = {metric.label: metric.value for metric in app.metric}
    assert metrics["Responses reviewed"] == "4" and metrics["Responses"] == "324"
    assert metrics["Verdicts that differ from the reference rule (reliablemath)"] == "0"  # curly refusals only
    agreement = next(frame.value for frame in app.dataframe
                     if {"model", "reviewed"} <= set(frame.value.columns)).set_index("model")
    assert agreement.loc["DeepSeek-R1", "reviewed"] == 4 and agreement.loc["GPT-4o", "reviewed"] == 0
    # One data source at a time, as in Tables 6-9.
    app.selectbox[0].select("aime").run()
    assert app.dataframe[0].value.set_index("model").loc["GPT-4o", "A S/R/F"] == "3/0/27"


def _shows_intervals(app: AppTest, table: pd.DataFrame, spec: str) -> None:
    """The intervals in the table, as error bars on the plot, and how wide they are next to the ranking."""
    # Wilson for DeepSeek-R1's Prec(A) 21/30 is [0.52, 0.83] (statsmodels' proportion_confint agrees).
    assert table.loc["DeepSeek-R1", "Prec(A) 95% CI"] == "[0.52, 0.83]"
    assert table.loc["GPT-4o", "Prud(A) 95% CI"] == "[0.00, 0.11]"
    # One response per item: Prec's interval is MOVER over Prec(A)'s and Prec(U)'s Wilson intervals.
    (la, ua), (lu, uu) = proportion_confint(21, 30, method="wilson"), proportion_confint(52, 132, method="wilson")
    prec, a, u = (21 / 30 + 52 / 132) / 2, 21 / 30, 52 / 132
    mover = (prec - ((a - la) ** 2 + (u - lu) ** 2) ** 0.5 / 2, prec + ((ua - a) ** 2 + (uu - u) ** 2) ** 0.5 / 2)
    assert table.loc["DeepSeek-R1", "Prec 95% CI"] == f"[{mover[0]:.2f}, {mover[1]:.2f}]"
    assert '"rule"' in spec and '"Prec low"' in spec and '"Prud high"' in spec
    caption = next(c.value for c in app.caption if "95% interval" in c.value)
    assert "about ±0.16 wide" in caption and "the smallest set has 30 responses: up to ±0.17" in caption
    assert "MOVER over the Wilson intervals of A and U (one response per item) for Prec and Prud" in caption


def test_annotators_may_not_open_the_report(engine: Engine) -> None:
    app = _open(engine, "ann", "annotator")
    assert [e.value for e in app.error] == ["Only reviewers and admins may open this page; you are signed in as ann "
                                           "(annotator)."]
    assert not app.dataframe


def test_no_transcripts_says_so(engine: Engine) -> None:
    app = _open(engine, "boss", "admin")
    assert [i.value for i in app.info][0].startswith("No transcripts yet")


def test_where_models_hallucinate(engine: Engine) -> None:
    """The figures by rewrite type and by difficulty_eval with their intervals (charts and tables), and the items
    the models disagree on most: choosing one shows each model's response in its own column, as text (the
    hand-built transcripts and figures of tests/transcripts/report/test_disagreed.py)."""
    from tests.support.judged_answers import HOSTILE, TABLE, add_answers

    data_ids = add_answers(engine, TABLE, solvable=frozenset({6}), difficulty=(0, 1, 1, 0, 1, 0))
    app = _open(engine, "rev", "reviewer")
    assert not app.exception, app.exception
    _reliability, by_type, by_difficulty = app.get("vega_lite_chart")
    for chart, by in ((by_type, "rewrite_type"), (by_difficulty, "difficulty_eval")):
        spec = json.loads(chart.proto.spec)
        assert spec["title"] == f"Prec(U) by {by}, 95% intervals"
        rules, points = spec["layer"]
        assert (rules["mark"]["type"], rules["encoding"]["x"]["field"], rules["encoding"]["x2"]["field"]) == (
            "rule", "low", "high")
        assert points["encoding"]["color"]["field"] == by
    main, by_type_table, by_difficulty_table, disagreed, _agreement, *_judges = (frame.value for frame in app.dataframe)
    # Model c on the remove items 0, 2, 4: F, F, (none); a: S, S, R (Prec(U) 2/3 with its Wilson interval).
    remove = by_type_table.set_index(["model", "rewrite_type"]).loc[("a", "remove")]
    assert remove["U S/R/F"] == "2/1/0" and remove["Prec(U) 95% CI"] == "[0.21, 0.94]"
    assert remove["Prec 95% CI"].startswith("[")
    assert set(by_difficulty_table["difficulty_eval"]) == {"simple", "hard"}

    assert list(disagreed["data_id"]) == [data_ids[i] for i in (0, 4, 2, 6, 3)]
    assert list(disagreed["rewrite_type"])[3] == "solvable"
    assert disagreed["verdicts"][0] == "a: S; b: R; c: F" and disagreed["verdicts"][4] == "a: S 1 · F 1; b: S"
    assert not [m for m in app.markdown if m.value.startswith("##### ")]  # nothing opened until chosen

    app.selectbox(key="disagreed_pick").select(("standard", data_ids[3])).run()
    assert not app.exception, app.exception
    headings = [m.value for m in app.markdown if m.value.startswith("##### ")]
    assert headings == ["##### a", "##### b"]
    # Each response as text under its verdict: the hostile HTML, link and \\href escaped, nothing rendered.
    responses = [m.value for m in app.markdown if m.value.startswith("**Successful**") or
                 m.value.startswith("**Failed**")]
    assert responses == [f"**{verdict}** · sample {sample}\n\n" + escape_markdown(
        f"{model} on {data_ids[3]}, sample {sample}: {HOSTILE}") for model, sample, verdict in
        (("a", 0, "Successful"), ("a", 1, "Failed"), ("b", 0, "Successful"))]
    assert all("<script>" not in text and "](javascript" not in text for text in responses)

    app.selectbox(key="breakdown_figure").select("Prud").run()
    assert json.loads(app.get("vega_lite_chart")[1].proto.spec)["title"] == "Prud by rewrite_type, 95% intervals"


def test_the_judges_table_has_every_rule_set_and_llm_judge(engine: Engine) -> None:
    from annotator.database.models import Judgement
    from annotator.transcripts import record_review
    from tests.support.candidates import add_user
    from tests.support.llm_judge import add_judged_transcripts

    ids = add_judged_transcripts(engine)
    reviewer = add_user(engine, "judith", role="reviewer")
    with write_session(engine) as session:
        for tid, human, llm in zip(ids[:4], "SRFS", "SRFF"):
            record_review(session, transcript_id=tid, annotator_id=reviewer.id, verdict=human)  # type: ignore[arg-type]
            session.add(Judgement(transcript_id=tid, rule="llm", model="<b>judge</b>", prompt_version="v1",
                                  verdict=llm, reason="why"))
    app = _open(engine, "rev", "reviewer")
    assert not app.exception, app.exception
    assert "Which judge to trust" in [header.value for header in app.subheader]
    table = next(frame.value for frame in app.dataframe if "note" in frame.value.columns).set_index("judge")
    assert list(table.index) == ["reliablemath", "reliablemath-exact", "llm <b>judge</b> @ v1"]
    assert table.loc["llm <b>judge</b> @ v1", "reviewed"] == 4
    assert table.loc["llm <b>judge</b> @ v1", "agreement"] == 0.75
    assert table.loc["reliablemath", "reviewed"] == 4
    confusion = next(frame.value for frame in app.dataframe if "judge says" in frame.value.columns)
    mine = confusion[confusion["judge"] == "llm <b>judge</b> @ v1"].set_index("judge says")
    assert mine.loc["F", "reviewer S"] == 1 and mine.loc["S", "reviewer S"] == 1 and mine.loc["F", "reviewer F"] == 1
    assert len(confusion) == 9
