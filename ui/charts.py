"""The pages' charts as Altair specs built from plain rows (no Streamlit here, so tests read the specs).

Rules every chart keeps: names (sources, models, annotators, tags) in full, in axis labels or tooltips; counts
on integer ticks; a legend for every colour; the order of the table beside the chart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

# Long names stay whole on axes and in legends (Vega-Lite cuts them at 180 px by default).
LABEL_LIMIT = 420
# Streamlit fits title, axes and legend into a chart's height: this leaves a plot of about 300 px under them.
HEIGHT = 480
COUNT_AXIS = alt.Axis(format="d", tickMinStep=1)  # counts: no 0.5 labels
# Filled shapes Vega-Lite draws; a model keeps its shape and colour in every chart of a page.
SHAPES = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-right", "triangle-left")
DIFFICULTY = {0: "simple", 1: "hard", None: "not labelled"}
DIFFICULTY_COLOURS = ["#4c78a8", "#f58518", "#bab0ac"]  # simple, hard, not labelled (grey: no finding)
# Ten hues far apart (Streamlit's own palette pairs a dark and a light blue): models and tags.
CATEGORIES = alt.Scale(scheme="tableau10")
SEPARATOR = " · "
WRAP = 34  # characters per line of a wrapped name (about 220 px)


def _legend(title: str | None, *, columns: int = 2) -> alt.Legend:
    return alt.Legend(title=title, orient="bottom", columns=columns, labelLimit=LABEL_LIMIT, symbolLimit=0)


def _wrap(name: str, width: int = WRAP) -> str:
    """A long name on several lines of at most `width` characters, broken after `_`, `-`, `.` or a space where
    it can be (else mid-word): the axis shows it whole in a label column of a fixed width."""
    lines, line = [], ""
    for piece in re.findall(r"[^_\-. ]*[_\-. ]?", name):
        while len(line) + len(piece) > width and (line or len(piece) > width):
            if line:
                lines.append(line)
                line = ""
            else:
                lines.append(piece[:width])
                piece = piece[width:]
        line += piece
    return "\n".join([*lines, line] if line else lines)


def state_rows(states: Sequence[dict[str, Any]], table: Sequence[dict[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """The Overview's chart rows (`stats.progress()["states"]`, each with its group's total and share) and the
    groups ("source · type") in the order of the table (`stats.rows`)."""
    frame = pd.DataFrame(list(states), columns=["data_source", "rewrite_type", "state", "candidates"])
    frame["group"] = frame["data_source"] + SEPARATOR + frame["rewrite_type"]
    frame["total"] = frame.groupby("group")["candidates"].transform("sum")
    frame["share"] = frame["candidates"] / frame["total"]
    order = [f"{row['data_source']}{SEPARATOR}{row['rewrite_type']}" for row in table]
    order = [group for group in dict.fromkeys(order) if group in set(frame["group"])]
    order += [group for group in dict.fromkeys(frame["group"]) if group not in order]
    frame["label"] = [f"{_wrap(source)}\n{kind} ({total})" for source, kind, total in
                      zip(frame["data_source"], frame["rewrite_type"], frame["total"])]
    labels = dict(zip(frame["group"], frame["label"]))
    return frame, [labels[group] for group in order]


def states_chart(frame: pd.DataFrame, order: list[str], *, states: Sequence[str]) -> alt.Chart:
    """Each data source and rewrite type as one full-width bar split by state (shares, so a source of four
    candidates reads as well as one of 4,000; its count is in its label and the tooltip)."""
    return alt.Chart(frame, title="Candidates by state (share of each source and rewrite type)").mark_bar().encode(
        # The source (wrapped), then the rewrite type and count: long names stay whole in a narrow column.
        y=alt.Y("label:N", sort=order, title=None, scale=alt.Scale(paddingInner=0.3),
                axis=alt.Axis(labelLimit=LABEL_LIMIT, labelExpr="split(datum.label, '\\n')")),
        x=alt.X("candidates:Q", stack="normalize", title="share of the candidates", axis=alt.Axis(format="%")),
        color=alt.Color("state:N", scale=alt.Scale(domain=list(states)), legend=_legend("state", columns=4)),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("data_source:N", title="data source"), alt.Tooltip("rewrite_type:N", title="rewrite type"),
                 "state:N", alt.Tooltip("candidates:Q", format="d"), alt.Tooltip("share:Q", format=".1%")],
    ).transform_calculate(order=f"indexof({list(states)}, datum.state)").properties(
        height=alt.Step(13 * max(label.count("\n") + 1 for label in order) + 14) if order else 100)


def per_day_chart(rows: Sequence[dict[str, Any]], *, by: str | None = None) -> alt.Chart:
    """Labels per day (stacked by `by`, e.g. "annotator", when given)."""
    encoding: dict[str, Any] = {
        "x": alt.X("day:O", title="day"),
        "y": alt.Y("labels:Q", stack="zero", axis=COUNT_AXIS),
        "tooltip": ["day:O", *([f"{by}:N"] if by else []), alt.Tooltip("labels:Q", format="d")],
    }
    if by:
        encoding["color"] = alt.Color(f"{by}:N", legend=_legend(by))
    return alt.Chart(pd.DataFrame(list(rows)), title="Labels per day").mark_bar().encode(**encoding).properties(
        height=HEIGHT if by else HEIGHT * 2 // 3)


def agreement_rows(report: dict[str, Any], names: Sequence[str]) -> pd.DataFrame:
    """Each annotator's Cohen's kappa against the majority of the others, per label, with the number of items
    it is over (`agreement.label_agreement`'s report), in the order of `names` (the table's)."""
    rows = []
    for label in ("human_check", "difficulty_eval"):
        people = {row["name"]: row for row in report[label]["annotators"]}
        for name in names:
            row = people.get(name) or {}
            kappa, items = row.get("kappa_vs_majority"), row.get("items_vs_majority", 0)
            text = "no majority" if kappa is None else f"{kappa:.2f} over {items} items"
            rows.append({"annotator": name, "label": label, "kappa": kappa, "items": items, "text": text})
    return pd.DataFrame(rows, columns=["annotator", "label", "kappa", "items", "text"])


def agreement_chart(frame: pd.DataFrame, names: Sequence[str]) -> alt.LayerChart:
    """Kappa against the majority as bars, each with its value and number of items written beside it."""
    low = min(0.0, float(frame["kappa"].min())) if frame["kappa"].notna().any() else 0.0
    base = alt.Chart(frame, title="Cohen's kappa against the majority of the others").encode(
        y=alt.Y("annotator:N", sort=list(names), title=None, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
        yOffset=alt.YOffset("label:N", sort=["human_check", "difficulty_eval"]),
        tooltip=["annotator:N", "label:N", alt.Tooltip("kappa:Q", format=".3f"),
                 alt.Tooltip("items:Q", format="d", title="items with a majority")],
    )
    bars = base.mark_bar().encode(
        x=alt.X("kappa:Q", scale=alt.Scale(domain=[low, 1.25]), title="kappa", axis=alt.Axis(values=[
            value / 10 for value in range(int(low * 10), 11, 2)])),
        color=alt.Color("label:N", sort=["human_check", "difficulty_eval"], legend=_legend("label")),
    )
    # The text sits right of the bar's end (at 0 for a missing kappa), so it never covers a bar.
    text = base.mark_text(align="left", dx=4, fontSize=11).encode(
        x=alt.X("at:Q"), text="text:N"
    ).transform_calculate(at="isValid(datum.kappa) ? max(datum.kappa, 0) : 0")
    return alt.layer(bars, text).properties(height=alt.Step(16))  # each bar's (an offset band)


def fitted(values: pd.Series) -> list[float]:
    """An axis range within 0..1 around the values, on tenths, with a tenth to spare each side (points of real
    models sit close together; a fixed 0..1 piles them up)."""
    low, high = float(values.min()), float(values.max())
    return [max(0.0, round(math.floor(low * 10 + 1e-9) / 10 - 0.1, 1)),
            min(1.0, round(math.ceil(high * 10 - 1e-9) / 10 + 0.1, 1))]


def reliability_chart(points: pd.DataFrame) -> alt.LayerChart:
    """Prud against Prec, one mark per model and prompt: the model by colour and shape (one legend), the prompt
    written beside the point, everything in the tooltip. Axes fitted to the points, a fixed height. With the
    columns `Prec low`, `Prec high`, `Prud low`, `Prud high` (95% intervals), error bars in both directions."""
    models = sorted(points["model"].unique()) if not points.empty else []
    scale = alt.Scale(domain=models, range=[SHAPES[i % len(SHAPES)] for i in range(len(models))])
    bars = [name for name in ("Prec", "Prud") if f"{name} low" in points and points[f"{name} low"].notna().any()]
    # The axes hold the error bars too, so that no bar is cut at the edge.
    extent = {name: pd.concat([points[name], *(points[f"{name} {end}"] for end in ("low", "high") if name in bars)])
              for name in ("Prec", "Prud")}
    tooltip = ["model:N", "prompt:N", alt.Tooltip("Prec:Q", format=".3f"), alt.Tooltip("Prud:Q", format=".3f")]
    tooltip += [alt.Tooltip(f"{name} {end}:Q", format=".3f") for name in bars for end in ("low", "high")]
    domains = {name: alt.Scale(domain=fitted(extent[name])) for name in ("Prec", "Prud")}
    base = alt.Chart(points).encode(
        x=alt.X("Prec:Q", scale=domains["Prec"], title="Prec"),
        y=alt.Y("Prud:Q", scale=domains["Prud"], title="Prud"),
        tooltip=tooltip,
    )
    colour = alt.Color("model:N", sort=models, scale=alt.Scale(domain=models, scheme="tableau10"),
                       legend=_legend("model"))
    dots = base.mark_point(filled=True, size=120, opacity=0.9).encode(
        color=colour, shape=alt.Shape("model:N", sort=models, scale=scale, legend=_legend("model")),
    )
    labels = base.mark_text(align="left", dx=8, dy=-6, fontSize=11, color="#555").encode(text="prompt:N")
    errors = []
    for name, axis in (("Prec", "x"), ("Prud", "y")):
        if name in bars:
            low = (alt.X if axis == "x" else alt.Y)(f"{name} low:Q", scale=domains[name], title=name)
            ends = {axis: low, f"{axis}2": (alt.X2 if axis == "x" else alt.Y2)(f"{name} high:Q")}
            errors.append(base.mark_rule(opacity=0.6, strokeWidth=1.5).encode(color=colour, **ends))
    return alt.layer(*errors, dots, labels, title="Reliability: Prudence against Precision, 95% intervals"
                     if bars else "Reliability: Prudence against Precision").properties(height=HEIGHT)


# The figures a breakdown chart can show (the title people read: the report row's key). Prec(U) first: the
# paper's Fig. 5 plots it by rewrite type and by difficulty (ReliableMath Section 4.2).
BREAKDOWN_FIGURES = {"Prec(U)": "prec_u", "Prud(U)": "prud_u", "Prec": "prec", "Prud": "prud"}


def breakdown_rows(rows: Sequence[dict[str, Any]], *, by: str, figure: str) -> pd.DataFrame:
    """Report rows broken down `by` rewrite_type or difficulty_eval (the pooled "all" rows left out) as a
    breakdown chart's rows: model · prompt, the value of `by` as people read it, the `figure` and its 95%
    interval (`low`, `high`; None without one)."""
    name = BREAKDOWN_FIGURES[figure]
    out = []
    for row in rows:
        if row[by] == "all" or row[name] is None:
            continue
        low, high = row[f"{name}_ci"] or (None, None)
        value = DIFFICULTY.get(row[by], str(row[by])) if by == "difficulty_eval" else str(row[by])
        out.append({"model": row["model"], "prompt": row["prompt"], "item": f"{row['model']}{SEPARATOR}{row['prompt']}",
                    by: value, figure: row[name], "low": low, "high": high})
    return pd.DataFrame(out, columns=["model", "prompt", "item", by, figure, "low", "high"])


def breakdown_chart(frame: pd.DataFrame, *, by: str, figure: str) -> alt.LayerChart:
    """`figure` per model and prompt (names on the y axis), one point per value of `by` (colours with a legend),
    each with its 95% interval as a bar; the x axis is 0..1 so that charts of different figures compare."""
    order = sorted(frame["item"].unique())
    if by == "difficulty_eval":
        values, colours = list(DIFFICULTY.values()), alt.Scale(domain=list(DIFFICULTY.values()),
                                                               range=DIFFICULTY_COLOURS)
    else:
        values, colours = sorted(frame[by].unique()), CATEGORIES
    base = alt.Chart(frame).encode(
        y=alt.Y("item:N", sort=order, title="model · prompt", axis=alt.Axis(labelLimit=LABEL_LIMIT)),
        yOffset=alt.YOffset(f"{by}:N", sort=values),
        color=alt.Color(f"{by}:N", sort=values, scale=colours, legend=_legend(by, columns=4)),
        tooltip=["model:N", "prompt:N", f"{by}:N", alt.Tooltip(f"{figure}:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f", title="95% low"), alt.Tooltip("high:Q", format=".3f",
                                                                                   title="95% high")],
    )
    axis = alt.X(f"{figure}:Q", scale=alt.Scale(domain=[0, 1]), title=figure)
    bars = base.mark_rule(strokeWidth=2, opacity=0.7).encode(x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1]),
                                                                      title=figure), x2="high:Q")
    points = base.mark_point(filled=True, size=70, opacity=1).encode(x=axis)
    return alt.layer(bars, points, title=f"{figure} by {by}, 95% intervals").properties(
        height=alt.Step(14))  # with an offset, the step is each point's row


PICK = "pick"  # the tags chart's selection: the bar a person clicked (model and tag)


def tags_chart(counts: Sequence[dict[str, Any]]) -> alt.Chart:
    """Hallucination tags per model, stacked; clicking a bar segment selects its (model, tag) as `PICK`."""
    frame = pd.DataFrame(list(counts), columns=["model", "tag", "transcripts"])
    pick = alt.selection_point(name=PICK, fields=["model", "tag"], on="click")
    return alt.Chart(frame, title="Reviewed transcripts per tag and model").mark_bar(cursor="pointer").encode(
        y=alt.Y("model:N", sort=sorted(frame["model"].unique()), title=None, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
        x=alt.X("transcripts:Q", stack="zero", axis=COUNT_AXIS, title="transcripts with the tag"),
        color=alt.Color("tag:N", scale=CATEGORIES, legend=_legend("tag")),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.45)),
        tooltip=["model:N", "tag:N", alt.Tooltip("transcripts:Q", format="d")],
    ).add_params(pick).properties(height=alt.Step(28))
