"""Evaluate: collect a model's answers (transcripts) on the evaluation set in the background. Admins only."""

import streamlit as st
from sqlmodel import Session

from annotator.db import read_session
from annotator.llm import DEFAULT_API_KEY_ENV, RoleConfig
from annotator.runs import RunError
from annotator.store import data_sources
from annotator.transcripts.collect import create_run, describe_run
from annotator.transcripts.options import ITEM_SETS, EvaluateOptions
from annotator.transcripts.prompts import PROMPT_NAMES
from annotator.vocabulary import RunKind
from ui import guard
from ui import runs as runs_view

st.title("Evaluate a model")
engine, user = guard.require_page(__file__)

with read_session(engine) as session:
    sources = data_sources(session)

with st.form("new_run"):
    st.caption(
        "Ask a model every solvable problem (the A set) and every vetted unsolvable candidate (the U set) with "
        "ReliableMath's standard or reliable prompt (TreeCut items get TreeCut's). Each answer is kept as a "
        "transcript; items that have one for this model, prompt and sample are skipped, and answers are cached."
    )
    left, right = st.columns(2)
    model = left.text_input("Model", placeholder="deepseek-reasoner", key="model")
    prompt = right.selectbox("Prompt", PROMPT_NAMES, index=PROMPT_NAMES.index("reliable"), key="prompt",
                             help="standard: ReliableMath Fig. 14; reliable: Fig. 15 (may answer unsolvable or "
                                  "don't know)")
    base_url = left.text_input("Base URL (empty = OpenAI)", placeholder="http://127.0.0.1:8000/v1", key="base_url")
    api_key_env = right.text_input(
        "API key variable", value=DEFAULT_API_KEY_ENV, key="api_key_env",
        help="The NAME of an environment variable of the server process; the key is never stored.",
    )
    source = left.selectbox("Data source", ["(all)", *sources], key="data_source")
    item_set = right.selectbox("Candidates", ITEM_SETS, key="item_set",
                               help="vetted: labelled human_check = 1 (the U set); all: every candidate")
    samples = left.number_input("Samples per item", min_value=1, max_value=64, value=1, key="samples")
    temperature = right.number_input("Temperature", min_value=0.0, max_value=2.0, value=0.0, step=0.1,
                                     key="temperature")
    max_tokens = left.number_input("Max tokens per answer (0 = server default)", min_value=0, value=0,
                                   key="max_tokens")
    concurrency = right.number_input("Concurrency", min_value=1, max_value=256, value=8, key="concurrency")
    limit = left.number_input("At most this many items (0 = all)", min_value=0, value=0, step=10, key="limit")
    submitted = runs_view.start_button()


def _create(session: Session) -> int:
    """The queued run the form asks for (its errors name what to fix)."""
    if not model.strip():
        raise RunError("name the model")
    options = EvaluateOptions(
        model=RoleConfig(model=model.strip(), base_url=base_url.strip() or None,
                         api_key_env=api_key_env.strip() or DEFAULT_API_KEY_ENV, temperature=float(temperature),
                         max_tokens=int(max_tokens) or None),
        prompt=prompt, data_source=None if source == "(all)" else source, item_set=item_set,
        samples=int(samples), limit=int(limit) or None, concurrency=int(concurrency),
    )
    options.model.api_key()  # a missing key variable is reported here, not in a log file
    run_id = create_run(session, options=options, created_by=user.name).id
    assert run_id is not None
    return run_id


runs_view.start(engine, user=user, submitted=submitted, create=_create)

st.subheader("Runs")
runs_view.show_runs(engine, user, kind=RunKind.evaluate, describe=describe_run, unit="responses")
