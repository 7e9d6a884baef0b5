"""Browse: every candidate, filtered and paged on the server; open one to see it with its label history.

Reviewers and admins see everyone's labels; annotators see only their own.
"""

import pandas as pd
import streamlit as st

from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.database.vocabulary import LABELS, label_name
from annotator.labelling import browse, gold, queue
from ui import guard
from ui import view as _view
from ui.markdown import escape_markdown
from ui.writes import page_write, saves

ALL = "(all)"

engine, user = guard.require_page(__file__)
everyone = browse.sees_everyone(user)
writes: dict[str, str | None] = st.session_state.setdefault("browse_writes", {"message": None})


@st.cache_data(ttl=60, show_spinner=False)
def _options(url: str) -> dict[str, list[str]]:
    with read_session(engine) as session:
        return queue.filter_options(session)


@st.cache_data(ttl=60, show_spinner=False)
def _annotators(url: str) -> list[dict[str, object]]:
    with read_session(engine) as session:
        return browse.annotators(session)


def _first_page() -> None:
    st.session_state["browse_page"] = 1


st.title("Browse")
options = _options(str(engine.url))
row1 = st.columns(4)
source = row1[0].selectbox("Data source", [ALL, *options["data_source"]], key="browse_source", on_change=_first_page)
rewrite = row1[1].selectbox("Rewrite type", [ALL, *options["rewrite_type"]], key="browse_type", on_change=_first_page)
state = row1[2].selectbox("Label state", browse.label_states(user), key="browse_state", on_change=_first_page)
annotator_id = None
if everyone:
    people = _annotators(str(engine.url))
    names = {person["name"]: person["id"] for person in people}
    chosen = row1[3].selectbox("Labelled by", [ALL, *names], key="browse_annotator", on_change=_first_page)
    annotator_id = None if chosen == ALL else names[chosen]
search = st.text_input("Search data_id, rewritten question or condition", key="browse_search", on_change=_first_page)
page_number = st.session_state.setdefault("browse_page", 1)

with read_session(engine) as session:
    page = browse.list_candidates(
        session,
        viewer=user,
        data_source=None if source == ALL else source,
        rewrite_type=None if rewrite == ALL else rewrite,
        label_state=state,
        annotator_id=annotator_id,
        search=search,
        page=page_number,
    )

if page.page > page.pages:
    st.session_state["browse_page"] = page.pages
    st.rerun()

nav = st.columns([1, 1, 4])
nav[0].button(
    "Previous", key="browse_prev", disabled=page.page <= 1,
    on_click=lambda: st.session_state.update(browse_page=page.page - 1),
)
nav[1].button(
    "Next", key="browse_next", disabled=page.page >= page.pages,
    on_click=lambda: st.session_state.update(browse_page=page.page + 1),
)
nav[2].caption(f"{page.total} candidates · page {page.page} of {page.pages}")

if not page.rows:
    st.info("No candidate matches these filters.")
    st.stop()

# The data id, the label state, my label and the number of labels first; the generation status last.
table = pd.DataFrame({"data_id": [row["data_id"] for row in page.rows]})
if everyone:
    table["state"] = [row["state"] for row in page.rows]
table["my label"] = [
    label_name(row["my_human_check"], row["my_difficulty_eval"], row["rewrite_type"])
    if row["my_human_check"] is not None else "" for row in page.rows
]
if everyone:
    table["labels"] = [row["label_count"] for row in page.rows]
for column in ("data_source", "rewrite_type", "rewritten_question"):
    table[column] = [row[column] for row in page.rows]
if everyone:
    table["resolved label"] = [
        label_name(row["human_check"], row["difficulty_eval"], row["rewrite_type"]) if row["label_count"] else ""
        for row in page.rows
    ]
table["status"] = [row["status"] for row in page.rows]
# st.dataframe shows cell text as text, never as HTML.
selection = st.dataframe(
    table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="browse_table"
)
selected = selection.selection.rows if selection else []
if not selected:
    st.caption("Select a row to open the candidate.")
    st.stop()

candidate_id = int(page.rows[selected[0]]["id"])
with read_session(engine) as session:
    view = queue.load(session, candidate_id=candidate_id, annotator_id=user.id)
    history = browse.label_history(session, candidate_id=candidate_id, viewer=user)
if view is None:
    st.warning("This candidate no longer exists.")
    st.stop()

st.divider()
st.markdown(f"#### {escape_markdown(view['data_id'])} · {escape_markdown(view['data_source'])} · "
            f"{escape_markdown(view['rewrite_type'])} · {escape_markdown(view['status'])}")
_view.candidate(view)
st.markdown("**Labels**" if everyone else "**My label**")
if history["labels"]:
    labels = pd.DataFrame(history["labels"])
    labels.insert(1, "label", [
        label_name(row["human_check"], row["difficulty_eval"], view["rewrite_type"]) for row in history["labels"]
    ])
    st.dataframe(labels, hide_index=True, width="stretch")
else:
    st.caption("No labels yet.")
if history["events"]:
    st.markdown("**History**")
    st.dataframe(pd.DataFrame(browse.history_rows(history["events"])), hide_index=True, width="stretch")


@saves(writes, "gold label", capability=Capability.administer)
def _set_gold(candidate_id: int) -> None:
    writes["message"] = None
    chosen = st.session_state.get(f"browse_gold_{candidate_id}")
    with page_write(engine, user=user) as session:
        if chosen is None:
            gold.unmark_gold(session, candidate_id=candidate_id)
        else:
            label = LABELS[chosen]
            gold.mark_gold(session, candidate_id=candidate_id, human_check=label.human_check,
                           difficulty_eval=label.difficulty_eval, created_by=user.id)


if auth.allows(user, Capability.administer):
    # Gold items are mixed into annotators' queues unannounced: only admins see or set them.
    with read_session(engine) as session:
        current = gold.gold_label(session, candidate_id=candidate_id)
    index = next((i for i, label in enumerate(LABELS) if (label.human_check, label.difficulty_eval) == current), None)
    st.markdown("**Gold item**")
    st.segmented_control(
        "Known label (annotators get gold items in their queues, unannounced)", list(range(len(LABELS))),
        format_func=lambda i: LABELS[i].name(view["rewrite_type"]), default=index, key=f"browse_gold_{candidate_id}",
        on_change=_set_gold, args=(candidate_id,),
    )
    st.caption("Gold label: " + ("none" if index is None else LABELS[index].name(view["rewrite_type"]))
               + " · choose a label to mark it, the chosen one again to unmark it.")
    if message := writes["message"]:  # Markdown we built (a busy database)
        st.warning(message)
