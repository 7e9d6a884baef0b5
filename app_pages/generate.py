"""Generate: run the LLM construction pipeline (ReliableMath Steps 1-2) in the background. Admins only."""

import streamlit as st
from sqlmodel import Session

from annotator.db import read_session
from annotator.llm import DEFAULT_API_KEY_ENV, RoleConfig
from annotator.pipeline import (
    DEFAULT_VERSION,
    GenerateOptions,
    RunError,
    available_versions,
    create_run,
    describe_run,
)
from annotator.store import data_sources
from annotator.vocabulary import RunKind
from ui import filtered, guard
from ui import runs as runs_view

st.title("Generate candidates")
engine, user = guard.require_page(__file__)

with read_session(engine) as session:
    sources = data_sources(session)

with st.form("new_run"):
    st.caption(
        "Extract 1-3 conditions per problem (M_I), rewrite each by removing it and by contradicting it (M_R), "
        "then verify. Answers are cached: a cancelled or failed run started again re-asks nothing it has."
    )
    left, right = st.columns(2)
    source = left.selectbox("Data source", ["(all)", *sources])
    limit = right.number_input("At most this many problems (0 = all)", min_value=0, value=0, step=10)
    extract_model = left.text_input("Extract / verify model (M_I)", placeholder="gpt-4o", key="extract_model")
    rewrite_model = right.text_input(
        "Rewrite / reasoning model (M_R)", placeholder="deepseek-reasoner", key="rewrite_model"
    )
    base_url = left.text_input("Base URL (empty = OpenAI)", placeholder="http://127.0.0.1:8000/v1", key="base_url")
    api_key_env = right.text_input(
        "API key variable", value=DEFAULT_API_KEY_ENV, key="api_key_env",
        help="The NAME of an environment variable of the server process; the key is never stored.",
    )
    concurrency = left.number_input("Concurrency", min_value=1, max_value=256, value=8)
    steps = right.selectbox("Steps", ["1,2", "1", "2"], help="1: extract + rewrite; 2: verify existing candidates")
    versions = available_versions()
    prompt_version = left.selectbox("Prompt version", versions, index=versions.index(DEFAULT_VERSION))
    max_tokens = right.number_input("Max tokens per answer (0 = server default)", min_value=0, value=0)
    submitted = runs_view.start_button()


def _create(session: Session) -> int:
    """The queued run the form asks for (its errors name what to fix)."""
    common = {"base_url": base_url.strip() or None, "api_key_env": api_key_env.strip() or DEFAULT_API_KEY_ENV,
              "max_tokens": int(max_tokens) or None}
    if not extract_model.strip() or not rewrite_model.strip():
        raise RunError("name both models")
    options = GenerateOptions(
        extract=RoleConfig(model=extract_model.strip(), **common),
        rewrite=RoleConfig(model=rewrite_model.strip(), **common),
        source=None if source == "(all)" else source, limit=int(limit) or None,
        concurrency=int(concurrency), steps=tuple(int(s) for s in steps.split(",")),
        prompt_version=prompt_version,
    )
    options.extract.api_key()  # a missing key variable is reported here, not in a log file
    run_id = create_run(session, options=options, created_by=user.name).id
    assert run_id is not None
    return run_id


runs_view.start(engine, user=user, submitted=submitted, create=_create)

st.subheader("Runs")
runs_view.show_runs(engine, user, kind=RunKind.generate, describe=describe_run, unit="problems",
                    details=filtered.show)
