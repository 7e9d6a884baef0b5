"""Report: Precision and Prudence per model and prompt (ReliableMath Eq. 1-2), as the paper lays them out
(Tables 3 and 6-9), a reliability plot, then where models hallucinate: the figures by rewrite type and by
difficulty_eval with their intervals, the reviewers' hallucination tags per model (a bar opens its transcripts on
Review) and the items the models disagree on most (one opens its transcripts side by side); last, how far the
judge agrees with the reviewers.

The same figures as `python -m annotator report`; reviewers and admins only.
"""

from typing import Any

import pandas as pd
import streamlit as st

from annotator.database.engine import read_session
from annotator.figures.agreement.intervals import wilson
from annotator.figures.child import ChildFailed
from annotator.figures.pages import JUDGES, REPORT
from annotator.figures.snapshots import Snapshot
from annotator.transcripts.judge.rule_sets import registry as rule_sets
from annotator.transcripts.report import disagreed, judges, scores
from ui import charts, guard, transcripts
from ui.markdown import escape_markdown
from ui.snapshot import show_freshness

TTL_SECONDS = 30
FIGURE_COLUMNS = [title for _, title in scores.PAPER_FIGURES] + ["kappa"]

engine, user = guard.require_page(__file__)


POINT_COLUMNS = ["model", "prompt", "Prec", "Prud", "Prec low", "Prec high", "Prud low", "Prud high"]


def _point(row: dict[str, Any]) -> dict[str, Any]:
    """A row on the reliability plot: Prec and Prud with their intervals (None without one)."""
    point = {"model": row["model"], "prompt": row["prompt"], "Prec": row["prec"], "Prud": row["prud"]}
    for name in ("prec", "prud"):
        low, high = row[f"{name}_ci"] or (None, None)
        point[f"{name.title()} low"], point[f"{name.title()} high"] = low, high
    return point


def _width_caption(smallest: int, rows: list[dict[str, Any]]) -> str:
    """How the intervals are made and how wide they are, next to the ranking: the widest Wilson interval of the
    smallest set of responses in the table (`smallest`, 0 for none)."""
    caption = (f"Each figure has its 95% interval: Wilson (1927) for Prec(A) .. Prud(U), "
               f"{scores.interval_methods(rows)} for Prec and Prud. With 30 items a Wilson interval is about "
               "±0.16 wide, so models whose intervals overlap are not ranked apart.")
    if smallest:
        low, high = wilson(smallest // 2, smallest) or (0.0, 0.0)
        caption += f" Here the smallest set has {smallest} responses: up to ±{(high - low) / 2:.2f}."
    return caption


@st.cache_resource
def _snapshot(url: str) -> Snapshot:
    # One read of every transcript's verdicts serves everyone: the latest figures are stored in the database for
    # every app server, recounted by one of them once transcripts, reviews or labels change or they are older
    # than TTL_SECONDS (`annotator.figures.snapshots`). One per process and database.
    return Snapshot(engine, REPORT, ttl=TTL_SECONDS, process="annotator.figures.pages:REPORT")


@st.cache_resource
def _judges_snapshot(url: str) -> Snapshot:
    # The rule sets judge the reviewed responses afresh (math-verify): one computation serves everyone, as above.
    return Snapshot(engine, JUDGES, ttl=TTL_SECONDS, process="annotator.figures.pages:JUDGES")


def _judges_section() -> None:
    """Every judge (the rule sets, each LLM judge) against the reviewers: kappa, agreement, confusion matrix."""
    st.subheader("Which judge to trust")
    try:
        rows = _judges_snapshot(str(engine.url)).get().value
    except ChildFailed as failed:  # none stored yet, and their first computation failed (logged by the server)
        st.error(f"The judges' figures could not be computed: {escape_markdown(str(failed))}.")
        return
    st.caption("Each judge's verdicts against the reviewers' on the reviewed responses (UMWP Table 3's layout): the "
               "rule sets judge them afresh, an LLM judge (`python -m annotator judge llm`) from its stored "
               "verdicts. Pick the judge whose kappa is highest.")
    summary = pd.DataFrame([{"judge": r["judge"], "reviewed": r["reviewed"], "agreement": r["agreement"],
                             "kappa": r["kappa"], "note": r["kappa_note"] or ""} for r in rows])
    st.dataframe(summary, hide_index=True, width="stretch", key="judges_table",
                 column_config={"agreement": st.column_config.NumberColumn(format="%.3f"),
                                "kappa": st.column_config.NumberColumn("Cohen's kappa", format="%.3f")})
    confusion = pd.DataFrame([
        {"judge": r["judge"], "judge says": verdict,
         **{f"reviewer {human}": r["confusion"][verdict][human] for human in judges.VERDICTS}}
        for r in rows for verdict in judges.VERDICTS
    ])
    st.caption("Confusion matrices: how many responses each judge called S, R or F, by the reviewers' verdict.")
    st.dataframe(confusion, hide_index=True, width="stretch", key="judges_confusion")


def _open_in_review() -> None:
    """Review's filters set to the chosen model and tag, its queue read again there (`app_pages/review.py`)."""
    model, tag = st.session_state["tags_pick"]
    st.session_state["review_model"], st.session_state["review_tag"] = model, tag
    st.session_state.pop("review", None)


def _tags(counts: list[dict[str, Any]]) -> None:
    """The tags chart; a click on a bar, or the list below it (keyboard), picks a model and tag to open."""
    st.subheader("Hallucination tags")
    if not counts:
        st.caption("Tags show here once reviewers tag transcripts on the Review page (keys 1..9).")
        return
    event = st.altair_chart(charts.tags_chart(counts), width="stretch", on_select="rerun", key="chart_tags",
                            selection_mode=charts.PICK)
    picked = [(row["model"], row["tag"]) for row in (event.get("selection") or {}).get(charts.PICK) or []]
    if picked and picked[0] != st.session_state.get("tags_clicked"):
        # A new click: it becomes the list's choice (set before the list is drawn in this run).
        st.session_state["tags_clicked"] = st.session_state["tags_pick"] = picked[0]
    number = {(row["model"], row["tag"]): row["transcripts"] for row in counts}
    # Full width: a long model name and tag stay whole in the box.
    st.selectbox("Transcripts to open (click a bar, or choose here)", list(number), key="tags_pick",
                 format_func=lambda pair: f"{pair[0]} · {pair[1]} ({number[pair]})")
    if st.button("Open them on Review", key="open_review", on_click=_open_in_review):
        st.switch_page("app_pages/review.py")


BREAKDOWNS = {"rewrite_type": "By rewrite type", "difficulty_eval": "By difficulty_eval"}


def _breakdowns(data: dict[str, Any]) -> None:
    """The figures by rewrite type and by difficulty_eval (ReliableMath Fig. 5 plots Prec(U) so), each a chart
    with 95% intervals and the paper's table; the U set split, each row with the whole A set."""
    st.subheader("By rewrite type and by difficulty")
    st.caption("Over every data source. Each row splits the unsolvable items (U) and keeps all the solvable ones (A), "
               "so Prec and Prud stay defined; their intervals are MOVER over the Wilson intervals of A and U with "
               "one response per item (a bootstrap over the items with several), the others Wilson.")
    figure = st.selectbox("Figure on the charts", list(charts.BREAKDOWN_FIGURES), key="breakdown_figure")
    for tab, by in zip(st.tabs(list(BREAKDOWNS.values())), BREAKDOWNS):
        with tab:
            points = charts.breakdown_rows(data[by], by=by, figure=figure)
            if points.empty:
                st.caption("Nothing to show here yet: these figures need responses on unsolvable items.")
                continue
            st.altair_chart(charts.breakdown_chart(points, by=by, figure=figure), width="stretch",
                            key=f"chart_{by}")
            rows = [row for row in data[by] if row[by] != scores.ALL]
            table = pd.DataFrame(scores.paper_layout(rows, intervals=True)).drop(columns=["data_source"])
            if by == "difficulty_eval":
                table[by] = [charts.DIFFICULTY.get(value, str(value)) for value in table[by]]
            st.dataframe(table, hide_index=True, width="stretch", key=f"table_{by}",
                         column_config={"model": st.column_config.TextColumn(pinned=True),
                                        **{name: st.column_config.NumberColumn(format="%.3f")
                                           for name in FIGURE_COLUMNS}})


DISAGREED_COLUMNS = ["disagreement", "models", "prompt", "data_id", "data_source", "rewrite_type", "verdicts"]


def _disagreed(rows: list[dict[str, Any]]) -> None:
    """The items the models disagree on most; one chosen (a row of the table, or the list below it: keyboard)
    opens its transcripts side by side, one column per model."""
    st.subheader("Items the models disagree on most")
    if not rows:
        st.caption("Items show here once two models have answered the same item under the same prompt "
                   "differently.")
        return
    st.caption("Disagreement: the chance that two different models, each giving one of its responses at random, "
               "get different verdicts (0: all agree, 1: no two agree); verdicts are the reviewers' where given.")
    table = pd.DataFrame([{**row, "rewrite_type": row["rewrite_type"] or "solvable",
                           "verdicts": disagreed.verdicts_text(row["verdicts"])} for row in rows],
                         columns=DISAGREED_COLUMNS)
    event = st.dataframe(table, hide_index=True, width="stretch", key="disagreed_table", on_select="rerun",
                         selection_mode="single-row",
                         column_config={"disagreement": st.column_config.NumberColumn(format="%.3f")})
    keys = [(row["prompt"], row["data_id"]) for row in rows]
    picked = (event.get("selection") or {}).get("rows") or []
    if picked and picked[0] < len(keys) and keys[picked[0]] != st.session_state.get("disagreed_clicked"):
        # A newly clicked row becomes the list's choice (set before the list is drawn in this run).
        st.session_state["disagreed_clicked"] = st.session_state["disagreed_pick"] = keys[picked[0]]
    chosen = st.selectbox("Item to open side by side (click a row, or choose here)", keys, index=None,
                          key="disagreed_pick", placeholder="Choose an item",
                          format_func=lambda key: f"{key[1]} · {key[0]} prompt")
    if chosen is None:
        return
    row = rows[keys.index(chosen)]
    with read_session(engine) as session:
        opened = disagreed.item_transcripts(session, problem_id=row["problem_id"], candidate_id=row["candidate_id"],
                                        prompt=row["prompt"])
    if opened is None:
        st.caption("This item's transcripts are gone (deleted or imported again); the list updates shortly.")
        return
    transcripts.side_by_side(opened)


st.title("Report")
snapshot = _snapshot(str(engine.url))
with st.spinner("Counting verdicts..."):
    try:
        reading = snapshot.get()
    except ChildFailed as failed:  # none stored yet, and their first computation failed (logged by the server)
        st.error(f"The report's figures could not be computed: {escape_markdown(str(failed))}. Opening the page again "
                 "tries again.")
        st.stop()
data = reading.value
if not data["by_source"]:
    st.info("No transcripts yet: collect them on the Evaluate page or import them (`python -m annotator import`).")
    st.stop()

sources = sorted({row["data_source"] for row in data["by_source"]} - {scores.ALL})
source = st.selectbox("Data source", [scores.ALL, *sources], help="'all' pools every data source.")
rows = [row for row in data["by_source"] if row["data_source"] == source]
table = pd.DataFrame(scores.paper_layout(rows, intervals=True)).drop(columns=["data_source"])
show_freshness(snapshot, reading, ttl=TTL_SECONDS, key="report")
st.caption("S/R/F: successful / refused / failed responses; A: solvable items, U: unsolvable items. Verdicts are "
           "the reviewers' where given, else the judge's. The table scrolls sideways on narrow screens; the model "
           "and prompt stay in view.")
# Model and prompt pinned: the figures scroll under them when the table is wider than the page.
st.dataframe(table, hide_index=True, width="stretch",
             column_config={"model": st.column_config.TextColumn(pinned=True),
                            "prompt": st.column_config.TextColumn(pinned=True),
                            **{name: st.column_config.NumberColumn(format="%.3f") for name in FIGURE_COLUMNS}})
smallest = min((row[part] for row in rows for part in ("A", "U") if row[part]), default=0)
st.caption(_width_caption(int(smallest), rows))  # counts and method names: the caption shows no data

points = pd.DataFrame([_point(r) for r in rows if r["prec"] is not None], columns=POINT_COLUMNS)
if points.empty:
    st.caption("The reliability plot needs responses on solvable items (Prec).")
else:
    st.altair_chart(charts.reliability_chart(points), width="stretch", key="chart_reliability")

st.header("Where models hallucinate")
_breakdowns(data)
_tags(data["tags"])
_disagreed(data["disagreed"])

st.header("Judge and reviewers")
pooled = [row for row in data["by_source"] if row["data_source"] == scores.ALL]
figures = st.container(horizontal=True, gap="medium")  # wraps rather than cutting the titles at 1024 px
figures.metric("Responses reviewed", sum(row["reviewed"] for row in pooled), width="content")
figures.metric("Responses", sum(row["A"] + row["U"] for row in pooled), width="content")
figures.metric(f"Verdicts that differ from the reference rule ({rule_sets.REFERENCE_RULE})",
               data["differs_from_reference"], width="content",
               help="; ".join(f"{entry.name}: {entry.description}" for entry in rule_sets.RULE_SETS))
agreement = pd.DataFrame([{"model": r["model"], "prompt": r["prompt"], "reviewed": r["reviewed"],
                           "kappa": r["judge_human_kappa"]} for r in pooled])
st.dataframe(agreement, hide_index=True, width="stretch",
             column_config={"kappa": st.column_config.NumberColumn("Cohen's kappa, judge vs human", format="%.3f")})

_judges_section()
