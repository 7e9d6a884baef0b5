"""Generate: run the LLM construction pipeline (ReliableMath Steps 1-2) in the background. Admins only."""

import streamlit as st

from annotator.construction.pipeline import DEFAULT_VERSION, GenerateOptions, available_versions
from annotator.database.engine import read_session
from annotator.database.queries import data_sources
from annotator.database.vocabulary import RunKind
from annotator.runs.kinds import spec
from ui import filtered, guard
from ui import runs as runs_view
from ui.llm_form import ModelField, connection

st.title("Generate candidates")
engine, user = guard.require_page(__file__)

with read_session(engine) as session:
    sources = data_sources(session)

MODELS = (ModelField("extract_model", "Extract / verify model (M_I)", "gpt-4o"),
          ModelField("rewrite_model", "Rewrite / reasoning model (M_R)", "deepseek-reasoner"))
KIND = spec(RunKind.generate)

with st.form("new_run"):
    st.caption(
        "Extract 1-3 conditions per problem (M_I), rewrite each by removing it and by contradicting it (M_R), "
        "then verify. Answers are cached: a cancelled or failed run started again re-asks nothing it has."
    )
    llm = connection(MODELS)
    left, right = st.columns(2)
    source = left.selectbox("Data source", ["(all)", *sources])
    limit = right.number_input("At most this many problems (0 = all)", min_value=0, value=0, step=10)
    steps = left.selectbox("Steps", ["1,2", "1", "2"], help="1: extract + rewrite; 2: verify existing candidates")
    versions = available_versions()
    prompt_version = right.selectbox("Prompt version", versions, index=versions.index(DEFAULT_VERSION))
    submitted = runs_view.start_button()


def _options() -> GenerateOptions:
    """The run the form asks for (its errors name what to fix)."""
    return GenerateOptions(
        extract=llm.role("extract_model"), rewrite=llm.role("rewrite_model"),
        source=None if source == "(all)" else source, limit=int(limit) or None,
        concurrency=llm.concurrency, steps=tuple(int(s) for s in steps.split(",")),
        prompt_version=prompt_version,
    )


runs_view.start(engine, user=user, submitted=submitted, kind=KIND, options=_options)

st.subheader("Runs")
runs_view.show_runs(engine, user, kind=KIND, details=filtered.show)
