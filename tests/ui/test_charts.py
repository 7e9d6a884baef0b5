"""`ui.charts`: the specs say what a reader needs (legends, shapes, whole names, integer ticks, the table's order)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from annotator.figures.stats import STATES
from ui import charts

LONG = "reliablemath_aime_2024_competition_problems_long_name"


def _layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return spec.get("layer", [spec])


def test_overview_bars_keep_the_tables_order_show_small_sources_and_whole_names() -> None:
    states = [
        {"data_source": "demo", "rewrite_type": "remove", "state": "kept-simple", "candidates": 3},
        {"data_source": LONG, "rewrite_type": "remove", "state": "unlabelled", "candidates": 4000},
        {"data_source": LONG, "rewrite_type": "remove", "state": "rejected", "candidates": 1000},
        {"data_source": "demo", "rewrite_type": "remove", "state": "unlabelled", "candidates": 1},
        {"data_source": "tiny", "rewrite_type": "contradict", "state": "unlabelled", "candidates": 2},
    ]
    table = [{"data_source": source, "rewrite_type": kind} for source, kind in
             [(LONG, "remove"), (LONG, "all"), ("tiny", "contradict"), ("demo", "remove"), ("all", "all")]]
    frame, order = charts.state_rows(states, table)
    assert order == ["reliablemath_aime_2024_\ncompetition_problems_long_name\nremove (5000)",
                     "tiny\ncontradict (2)", "demo\nremove (4)"]
    # Shares: a source of 4 candidates is a whole bar as one of 5,000 is.
    shares = frame.groupby("group")["share"].sum()
    assert list(shares.round(6)) == [1.0, 1.0, 1.0]
    spec = charts.states_chart(frame, order, states=STATES).to_dict()
    assert spec["encoding"]["y"]["sort"] == order
    # Whole names: long ones wrap over lines of at most 34 characters (about 7 px each at the axis' font size).
    assert spec["encoding"]["y"]["axis"]["labelExpr"] == "split(datum.label, '\\n')"
    assert max(len(line) for label in order for line in label.split("\n")) * 7 <= spec["encoding"]["y"]["axis"][
        "labelLimit"]
    assert "".join(order[0].split("\n")[:-1]) == LONG
    assert spec["encoding"]["x"]["stack"] == "normalize" and spec["encoding"]["x"]["axis"]["format"] == "%"
    assert spec["encoding"]["color"]["legend"]["title"] == "state"
    tooltip = {item["field"] for item in spec["encoding"]["tooltip"]}
    assert {"data_source", "candidates", "share"} <= tooltip


def test_labels_per_day_have_integer_ticks() -> None:
    spec = charts.per_day_chart([{"day": "2026-11-24", "labels": 3}, {"day": "2026-11-25", "labels": 1}]).to_dict()
    axis = spec["encoding"]["y"]["axis"]
    assert axis["format"] == "d" and axis["tickMinStep"] == 1
    stacked = charts.per_day_chart([{"day": "2026-11-24", "annotator": "ann", "labels": 3}], by="annotator")
    assert stacked.to_dict()["encoding"]["color"]["field"] == "annotator"


def _report() -> dict[str, Any]:
    people = [{"name": "ann", "kappa_vs_majority": 0.8, "items_vs_majority": 6},
              {"name": "bea", "kappa_vs_majority": None, "items_vs_majority": 0}]
    return {"human_check": {"annotators": people},
            "difficulty_eval": {"annotators": [{"name": "bea", "kappa_vs_majority": -0.25, "items_vs_majority": 4}]}}


def test_agreement_rows_give_kappa_and_items_per_annotator_in_the_tables_order() -> None:
    frame = charts.agreement_rows(_report(), ["bea", "ann", "cid"])
    rows = frame.to_dict("records")
    assert [(r["annotator"], r["label"]) for r in rows] == [
        ("bea", "human_check"), ("ann", "human_check"), ("cid", "human_check"),
        ("bea", "difficulty_eval"), ("ann", "difficulty_eval"), ("cid", "difficulty_eval")]
    assert rows[1]["text"] == "0.80 over 6 items" and rows[0]["text"] == "no majority"
    assert rows[3]["text"] == "-0.25 over 4 items" and rows[2]["items"] == 0


def test_agreement_chart_shows_negative_kappa_and_a_legend_for_the_label() -> None:
    frame = charts.agreement_rows(_report(), ["bea", "ann"])
    bars, text = charts.agreement_chart(frame, ["bea", "ann"]).to_dict()["layer"]
    assert bars["encoding"]["x"]["field"] == "kappa" and bars["encoding"]["x"]["scale"]["domain"][0] == -0.25
    assert bars["encoding"]["color"]["legend"]["title"] == "label"
    assert bars["encoding"]["y"]["sort"] == ["bea", "ann"]
    assert text["encoding"]["text"]["field"] == "text"


def test_reliability_tells_models_apart_by_colour_and_shape_with_one_legend_and_labels_points() -> None:
    points = pd.DataFrame([
        {"model": LONG, "prompt": "reliable", "Prec": 0.5, "Prud": 0.1},
        {"model": "gpt-4o", "prompt": "standard", "Prec": 0.7, "Prud": 0.02},
        {"model": "gpt-4o", "prompt": "reliable", "Prec": 0.6, "Prud": 0.2},
    ])
    spec = charts.reliability_chart(points).to_dict()
    dots, labels = spec["layer"]
    assert dots["encoding"]["color"]["field"] == dots["encoding"]["shape"]["field"] == "model"
    # The same field and title: Vega-Lite draws one legend with coloured shapes.
    assert dots["encoding"]["color"]["legend"]["title"] == dots["encoding"]["shape"]["legend"]["title"] == "model"
    assert dots["encoding"]["shape"]["scale"]["range"] == ["circle", "square"]
    assert dots["encoding"]["color"]["legend"]["labelLimit"] >= 400
    assert labels["mark"]["type"] == "text" and labels["encoding"]["text"]["field"] == "prompt"
    assert {item["field"] for item in dots["encoding"]["tooltip"]} == {"model", "prompt", "Prec", "Prud"}
    # A fixed height: the plot keeps its size in a narrow window; the axes fit the points, within 0..1.
    assert spec["height"] == charts.HEIGHT
    assert dots["encoding"]["x"]["scale"]["domain"] == [0.4, 0.8] and dots["encoding"]["y"]["scale"]["domain"] == [
        0.0, 0.3]


def test_breakdowns_name_model_and_prompt_on_the_axis_with_a_legend_and_error_bars() -> None:
    def row(by: str, value: Any, prec_u: float | None, ci: list[float] | None) -> dict[str, Any]:
        return {"model": LONG, "prompt": "reliable", by: value, "prec_u": prec_u, "prec_u_ci": ci}

    rows = [row("difficulty_eval", "all", 0.4, [0.3, 0.5]), row("difficulty_eval", 1, 0.3, [0.2, 0.45]),
            row("difficulty_eval", 0, 0.5, [0.35, 0.65]), row("difficulty_eval", None, None, None)]
    frame = charts.breakdown_rows(rows, by="difficulty_eval", figure="Prec(U)")
    # The pooled row and the undefined figure left out; difficulty as people say it.
    assert list(frame["difficulty_eval"]) == ["hard", "simple"] and list(frame["low"]) == [0.2, 0.35]
    spec = charts.breakdown_chart(frame, by="difficulty_eval", figure="Prec(U)").to_dict()
    bars, points = spec["layer"]
    assert points["encoding"]["y"]["field"] == "item" and points["encoding"]["y"]["axis"]["labelLimit"] >= 400
    assert points["encoding"]["color"]["legend"]["title"] == "difficulty_eval"
    assert points["encoding"]["color"]["sort"] == ["simple", "hard", "not labelled"]
    assert (bars["mark"]["type"], bars["encoding"]["x"]["field"], bars["encoding"]["x2"]["field"]) == (
        "rule", "low", "high")
    assert points["encoding"]["x"]["field"] == "Prec(U)" and points["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert spec["title"] == "Prec(U) by difficulty_eval, 95% intervals"
    [values] = spec["datasets"].values()
    assert {row["item"] for row in values} == {f"{LONG} · reliable"}
    types = charts.breakdown_rows([row("rewrite_type", "remove", 0.5, None)], by="rewrite_type", figure="Prec(U)")
    assert list(types["rewrite_type"]) == ["remove"] and types["low"].isna().all()  # no interval: no bar


def test_tags_chart_stacks_tags_per_model_with_integer_ticks_and_a_click_selection() -> None:
    counts = [{"model": "m1", "tag": "invented a missing value", "transcripts": 3},
              {"model": "m1", "tag": "no final answer", "transcripts": 1},
              {"model": "m2", "tag": "no final answer", "transcripts": 2}]
    spec = charts.tags_chart(counts).to_dict()
    assert spec["encoding"]["x"]["stack"] == "zero" and spec["encoding"]["x"]["axis"]["format"] == "d"
    assert spec["encoding"]["color"]["field"] == "tag" and spec["encoding"]["color"]["legend"]["title"] == "tag"
    [param] = spec["params"]
    assert param["name"] == charts.PICK and param["select"]["fields"] == ["model", "tag"]


def test_reliability_draws_intervals_as_error_bars_both_ways_inside_the_axes() -> None:
    points = pd.DataFrame([
        {"model": "m", "prompt": "reliable", "Prec": 0.5, "Prud": 0.1, "Prec low": 0.31, "Prec high": 0.66,
         "Prud low": 0.04, "Prud high": 0.36},
        {"model": "n", "prompt": "reliable", "Prec": 0.6, "Prud": 0.2, "Prec low": None, "Prec high": None,
         "Prud low": None, "Prud high": None},
    ])
    spec = charts.reliability_chart(points).to_dict()
    across, up, dots, _labels = spec["layer"]
    assert across["mark"]["type"] == up["mark"]["type"] == "rule"
    assert (across["encoding"]["x"]["field"], across["encoding"]["x2"]["field"]) == ("Prec low", "Prec high")
    assert (up["encoding"]["y"]["field"], up["encoding"]["y2"]["field"]) == ("Prud low", "Prud high")
    assert across["encoding"]["y"]["field"] == "Prud" and up["encoding"]["x"]["field"] == "Prec"
    # The axes widen to hold the bars, and keep the names of the figures.
    assert dots["encoding"]["x"]["scale"]["domain"] == [0.2, 0.8] and dots["encoding"]["y"]["scale"]["domain"] == [
        0.0, 0.5]
    assert across["encoding"]["x"]["title"] == dots["encoding"]["x"]["title"] == "Prec"
    assert "95% intervals" in spec["title"]
