"""Evaluate: collect a model's answers (transcripts) on the evaluation set in the background. Admins only."""

import streamlit as st

from annotator.database.engine import read_session
from annotator.database.queries import data_sources
from annotator.database.vocabulary import RunKind
from annotator.runs.kinds import spec
from annotator.settings import limits
from annotator.transcripts.collect.options import ITEM_SETS, EvaluateOptions
from annotator.transcripts.collect.prompts import PROMPT_NAMES
from ui import guard
from ui import runs as runs_view
from ui.llm_form import ModelField, connection

st.title("Evaluate a model")
engine, user = guard.require_page(__file__)

with read_session(engine) as session:
    sources = data_sources(session)

KIND = spec(RunKind.evaluate)

with st.form("new_run"):
    st.caption(
        "Ask a model every solvable problem (the A set) and every vetted unsolvable candidate (the U set) with "
        "ReliableMath's standard or reliable prompt (TreeCut items get TreeCut's). Each answer is kept as a "
        "transcript; items that have one for this model, prompt and sample are skipped, and answers are cached."
    )
    llm = connection([ModelField("model", "Model", "deepseek-reasoner")], temperature=True)
    left, right = st.columns(2)
    prompt = left.selectbox("Prompt", PROMPT_NAMES, index=PROMPT_NAMES.index("reliable"), key="prompt",
                            help="standard: ReliableMath Fig. 14; reliable: Fig. 15 (may answer unsolvable or "
                                 "don't know)")
    source = right.selectbox("Data source", ["(all)", *sources], key="data_source")
    item_set = left.selectbox("Candidates", ITEM_SETS, key="item_set",
                              help="vetted: labelled human_check = 1 (the U set); all: every candidate")
    samples = right.number_input("Samples per item", min_value=1, max_value=64, value=1, key="samples")
    limit = left.number_input("At most this many items (0 = all)", min_value=0, value=0, step=10, key="limit",
                              help="Solvable and unsolvable items in proportion, at least one of each from 2 on "
                                   "(1 takes one item of the bigger set)")
    seed = right.number_input("Seed of the items a limit takes", min_value=int(limits.SEED.low),
                              max_value=int(limits.SEED.high), value=0,
                              key="seed", help="The same seed takes the same items again (a run resumes them)")
    submitted = runs_view.start_button()


def _options() -> EvaluateOptions:
    """The run the form asks for (its errors name what to fix)."""
    return EvaluateOptions(
        model=llm.role("model"), prompt=prompt, data_source=None if source == "(all)" else source,
        item_set=item_set, samples=int(samples), limit=int(limit) or None, seed=int(seed),
        concurrency=llm.concurrency,
    )


runs_view.start(engine, user=user, submitted=submitted, kind=KIND, options=_options)

st.subheader("Runs")
runs_view.show_runs(engine, user, kind=KIND)
