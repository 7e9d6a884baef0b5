"""One item's transcripts side by side (the Report's most-disagreed items): the item as Review shows it, then one
column per model with each of its responses as Review shows a response, model text only through
`ui.markdown.escape_markdown` (by way of `ui.view.text`)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from annotator.database.vocabulary import Verdict
from ui import view as _view
from ui.markdown import escape_markdown

VERDICT_NAMES = {Verdict.S: "Successful", Verdict.R: "Refused", Verdict.F: "Failed"}
PER_ROW = 3  # model columns on one row; more models wrap onto further rows (a response needs ~300 px)


def item(view: dict[str, Any], *, candidate: bool) -> None:
    """The item: a candidate's two questions with their diff and its fields, or a solvable problem and its
    ground truth (as on Review)."""
    if candidate:
        _view.questions(view)
        st.markdown(_view.details(view))
    else:
        with st.container(border=True):
            st.markdown(f"**Solvable problem**\n\n{_view.text(view['question'])}")
        st.markdown(f"**Ground truth:** {_view.text(view['ground_truth'])}")


def _verdict(value: str | None) -> str:
    return VERDICT_NAMES[Verdict(value)] if value else "no verdict"


def response(transcript: dict[str, Any]) -> None:
    """One response with its verdict (the reviewer's where given), the judge's reading and the tags."""
    reviewed = " (reviewed)" if transcript["human"] is not None else ""
    heading = f"**{_verdict(transcript['verdict'])}**{reviewed} · sample {int(transcript['sample'])}"
    with st.container(border=True):
        st.markdown(f"{heading}\n\n{_view.text(transcript['response'])}")
    judged = (f"**Extracted answer:** {_view.text(transcript['extracted_answer'])} · **Judge:** "
              f"{_view.text(transcript['judge_class'])} → {escape_markdown(_verdict(transcript['judge']))}")
    if transcript["tags"]:
        judged += " · **Tags:** " + escape_markdown(", ".join(str(tag) for tag in transcript["tags"]))
    st.caption(judged)
    if transcript["reasoning"]:
        with st.expander(f"Reasoning ({len(transcript['reasoning']):,} characters)"):
            st.markdown(_view.text(transcript["reasoning"]))


def side_by_side(opened: dict[str, Any]) -> None:
    """`where.item_transcripts`' item, then its models in columns, `PER_ROW` to a row, in the models' order."""
    if opened["item"] is not None:
        item(opened["item"], candidate=opened["candidate_id"] is not None)
    models = list(opened["models"].items())
    for start in range(0, len(models), PER_ROW):
        columns = st.columns(min(PER_ROW, len(models)), gap="small")  # two models: halves, not two thirds
        for column, (model, transcripts) in zip(columns, models[start : start + PER_ROW]):
            with column:
                st.markdown(f"##### {escape_markdown(model)}")
                for transcript in transcripts:
                    response(transcript)
