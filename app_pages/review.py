"""Review: model transcripts one by one, the judge's verdict confirmed or overridden with one key.

`S` successful, `R` refused, `F` failed, `Enter` agrees with the judge, `1`..`9` toggle the hallucination
tags, `M` typesets the math of the response on screen, `B` back, `N` next without reviewing. A verdict key
saves the verdict, the tags and the comment in a button callback (one transaction, with its event), before the
next transcript is drawn. The queue (rule sets disagree, judge unsure, a sample of the rest; unreviewed first) is
opened when the page opens or a filter changes and read a page at a time from its index as the reviewer goes
(`transcripts.ReviewQueue`); a keypress reruns only the workspace fragment, as on Annotate.

A response and its reasoning are shown as text (`st.text`: no Markdown, so no link, image or HTML; the math
source as the model wrote it) until the reviewer asks for typeset math: `M` for the response on screen, or the
sidebar's setting for every response this session (then through `ui.markdown.escape_markdown`, the one Markdown
path for model text). Typesetting a response's hundred formulas is what made a key on Review twice as slow as
on Annotate (BENCHMARKS.md).
"""

from typing import Any

import streamlit as st

from annotator import transcripts
from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.database.vocabulary import Verdict
from ui import guard, pages
from ui import transcripts as side_by_side
from ui import view as _view
from ui.keys import keyboard
from ui.markdown import escape_markdown
from ui.ready import is_ready, wait_for_buttons
from ui.writes import page_write, saves

WORKSPACE = "review"
ALL = "(all)"
VERDICT_NAMES = {Verdict.S: "Successful", Verdict.R: "Refused", Verdict.F: "Failed"}
# The three verdict keys go through `ui.keys` (Streamlit reserves R for "rerun", so Refused cannot have a
# `shortcut=`): one way for all three, so that their buttons read alike ("Refused · R"), without Streamlit's
# own key badge on two of them.
VERDICT_KEYS = {verdict.value.lower(): f"verdict_{verdict}" for verdict in VERDICT_NAMES}
# `M` goes the same way, so that its button reads "Typeset math · M" like the verdicts.
TYPESET_KEY = {"m": "typeset_math"}

engine, user = guard.require_page(__file__)
state: dict[str, Any] = st.session_state.setdefault(
    "review", {"queue": None, "position": 0, "view": None, "tags": [], "message": None}
)


def _filters() -> dict[str, str | None]:
    model = st.session_state.get("review_model", ALL)
    prompt = st.session_state.get("review_prompt", ALL)
    tag = st.session_state.get("review_tag", ALL)  # also set by the Report page's tags chart
    return {"model": None if model == ALL else model, "prompt": None if prompt == ALL else prompt,
            "tag": None if tag == ALL else tag}


def _blind() -> bool:
    return bool(st.session_state.get("review_blind"))


def _show(session: Any, position: int) -> None:
    """Put the queue's transcript at `position` on screen (state only; the fragment draws it)."""
    queue = state["queue"]
    transcript_id = queue.id_at(session, max(0, position))  # reads the queue's next page when needed
    state["position"] = max(0, min(position, len(queue)))
    view = None
    if transcript_id is not None:
        view = transcripts.load_review(session, transcript_id=transcript_id)
    state["view"] = view
    state["tags"] = list((view or {}).get("tags") or [])
    st.session_state["review_comment"] = (view or {}).get("comment") or ""


def _load() -> None:
    with read_session(engine) as session:
        # Seeded by the reviewer, so that two reviewers' samples differ but each one's is stable.
        state["queue"] = transcripts.ReviewQueue.open(session, seed=user.id, **_filters())
        state["tag_list"] = transcripts.get_tags(session)
        _show(session, 0)


def _move(step: int) -> None:
    with read_session(engine) as session:
        _show(session, state["position"] + step)
    state["message"] = None


def _may_press() -> bool:
    """A key pressed before the transcript was on screen (`ui.ready`) does nothing."""
    return is_ready(WORKSPACE)


@saves(state, "review", capability=Capability.review)
def _decide(verdict: str | None) -> None:
    """Save `verdict` (None: the judge's) with the chosen tags and the comment, then show the next one."""
    view = state["view"]
    if view is None or not _may_press():
        return
    if verdict is None:
        if _blind() or view["judge"] is None:
            state["message"] = "There is no judge's verdict to agree with here; press S, R or F."
            return
        verdict = view["judge"]
    with page_write(engine, user=user) as session:
        changed = transcripts.record_review(
            session, transcript_id=view["id"], annotator_id=user.id, verdict=verdict, tags=state["tags"],
            comment=st.session_state.get("review_comment"),
        )
        _show(session, state["position"] + 1)
    done = "Saved" if changed else "Unchanged"
    state["message"] = f"{done} {escape_markdown(view['data_id'])}: {VERDICT_NAMES[Verdict(verdict)]}."


@saves(state, "clearing", capability=Capability.review)
def _clear() -> None:
    view = state["view"]
    if view is None:
        return
    with page_write(engine, user=user) as session:
        transcripts.clear_review(session, transcript_id=view["id"], annotator_id=user.id)
        _show(session, state["position"])
    state["message"] = f"Cleared the review of {escape_markdown(view['data_id'])}; the judge's verdict counts."


def _toggle(tag: str) -> None:
    # Only the screen changes; the tags are saved with the verdict.
    if not is_ready(WORKSPACE):
        return
    state["tags"] = [t for t in state["tags"] if t != tag] if tag in state["tags"] else [*state["tags"], tag]


@saves(state, "tag list", capability=Capability.review)
def _save_tags() -> None:
    lines = (st.session_state.get("review_tag_text") or "").splitlines()
    try:
        with page_write(engine, user=user) as session:
            state["tag_list"] = transcripts.set_tags(session, tags=[line for line in lines if line.strip()])
    except transcripts.ReviewError as exc:
        state["tag_message"] = str(exc)
        return
    state["tag_message"] = None


def _heading(view: dict[str, Any] | None) -> str:
    if not is_ready(WORKSPACE):
        return "Loading the transcript..."
    if view is None:
        return "Nothing left to review"
    item = view["item"]
    parts = [view["data_id"], item["data_source"], item["rewrite_type"] or "solvable"]
    return " · ".join(escape_markdown(str(part)) for part in parts)


def _buttons(view: dict[str, Any] | None) -> None:
    """The verdict keys, then the tag keys: the same widgets, with the same keys, on every rerun."""
    none = view is None
    with st.container(horizontal=True):
        for verdict, name in VERDICT_NAMES.items():
            st.button(f"{name} · {verdict.value}", key=f"verdict_{verdict}", on_click=_decide,
                      args=(verdict.value,), disabled=none, type="primary", width="stretch")
        st.button("Agree with the judge", key="agree", shortcut="Enter", on_click=_decide, args=(None,),
                  disabled=none or _blind() or view["judge"] is None, width="stretch")
        st.button("Back", key="back", shortcut="B", on_click=_move, args=(-1,), disabled=state["position"] == 0,
                  width="stretch")
        st.button("Next", key="next", shortcut="N", on_click=_move, args=(1,), disabled=none, width="stretch")
    with st.container(horizontal=True):
        for number, tag in enumerate(state.get("tag_list") or [], start=1):
            chosen = tag in state["tags"]
            st.button(("✓ " if chosen else "") + escape_markdown(tag), key=f"tag_{number}", shortcut=str(number),
                      on_click=_toggle, args=(tag,), disabled=none, type="primary" if chosen else "secondary")
        typeset = not none and _typeset(view)
        st.button(("✓ " if typeset else "") + "Typeset math · M", key="typeset_math", on_click=_typeset_this,
                  disabled=none or bool(state.get("typeset")), type="primary" if typeset else "secondary")


def _status(view: dict[str, Any] | None) -> str:
    size = len(state["queue"])
    parts = [f"**{min(state['position'] + 1, size)} of {size}**"]
    if view is not None and not _blind():
        parts.append(f"in the queue because: {escape_markdown(view['reason'])}")
    if view is not None and view["human"] is not None:
        parts.append(f":orange-badge[Reviewed: {VERDICT_NAMES[Verdict(view['human'])]}]")
    if state.get("message"):
        parts.append(state["message"])
    return " · ".join(parts)


def _typeset_this() -> None:
    """`M`: the response on screen typeset, or shown as text again (only the screen changes)."""
    view = state["view"]
    if view is None or not is_ready(WORKSPACE):
        return
    state["typeset_one"] = None if state.get("typeset_one") == view["id"] else view["id"]


def _typeset(view: dict[str, Any]) -> bool:
    """Whether this transcript's response is shown with its math typeset (the setting, or `M` on it)."""
    return bool(state.get("typeset")) or state.get("typeset_one") == view["id"]


def _remember_typeset() -> None:
    state["typeset"] = bool(st.session_state.get("review_math"))


def _model_text(value: str | None, *, typeset: bool) -> None:
    """Model text typeset (escaped Markdown with its math), or as text: no Markdown at all, cheap to draw."""
    if typeset:
        st.markdown(_view.text(value))
    else:
        st.text(value or "—", width="stretch")


def _response(view: dict[str, Any]) -> None:
    who = "" if _blind() else f" · {escape_markdown(view['model'])} · {escape_markdown(view['prompt'])} prompt"
    typeset = _typeset(view)
    with st.container(border=True, key="response"):
        st.markdown(f"**Response**{who} · sample {int(view['sample'])}"
                    f"{'' if typeset else ' · math as written (M typesets it)'}")
        _model_text(view["response"], typeset=typeset)
    judged = f"**Extracted answer:** {_view.text(view['extracted_answer'])}"
    if not _blind():
        verdict = VERDICT_NAMES[Verdict(view["judge"])] if view["judge"] else "—"
        judged += f" · **Judge:** {_view.text(view['judge_class'])} → {verdict} ({_view.text(view['judge_rule'])})"
        if view.get("judge_reason"):  # an LLM judge says why
            judged += f" · **Why:** {_view.text(view['judge_reason'])}"
        if view["rules_disagree"]:
            judged += " · :orange-badge[the two rule sets disagree]"
    st.markdown(judged)
    if view["reasoning"]:
        with st.expander(f"Reasoning ({len(view['reasoning']):,} characters)"):
            _model_text(view["reasoning"], typeset=typeset)


@st.fragment
def workspace() -> None:
    """The transcript, the keys, the status line and the comment; a keypress reruns only this."""
    if not guard.permitted(pages.page(__file__).capability):
        st.rerun(scope="app")  # signed out or no longer a reviewer: app.py and the guard take over
    view = state["view"]
    st.markdown(f"#### {_heading(view)}")
    _buttons(view)
    st.caption(_status(view))
    if not wait_for_buttons(WORKSPACE):
        return
    if view is None:
        if not len(state["queue"]):
            st.info("There are no transcripts for these filters yet.")
        else:
            st.success("You are at the end of the queue.")
            st.button("Start again from the top", key="restart", on_click=_load)
        return
    st.text_input("Comment", key="review_comment", label_visibility="collapsed",
                  placeholder="Comment, optional, saved with the verdict (Esc, then a key)")
    side_by_side.item(view["item"], candidate=view["candidate_id"] is not None)
    _response(view)
    if view["human"] is not None:
        st.button("Clear my review (the judge's verdict counts again)", key="clear", on_click=_clear)


if state["queue"] is None:
    _load()
keyboard({**VERDICT_KEYS, **TYPESET_KEY})
workspace()

with read_session(engine) as _session:
    options = transcripts.review_options(_session)
with st.sidebar:
    st.selectbox("Model", [ALL, *options["model"]], key="review_model", on_change=_load)
    st.selectbox("Prompt", [ALL, *options["prompt"]], key="review_prompt", on_change=_load)
    chosen_tag = _filters()["tag"]  # a tag no longer in the list stays choosable while chosen
    tag_options = dict.fromkeys([*(state.get("tag_list") or []), *([chosen_tag] if chosen_tag else [])])
    st.selectbox("Tag", [ALL, *tag_options], key="review_tag", on_change=_load)
    st.toggle("Blind mode (hide the model and the judge)", key="review_blind")
    st.session_state["review_math"] = bool(state.get("typeset"))  # kept for the session, across pages
    st.toggle("Typeset math in every response", key="review_math", on_change=_remember_typeset, help=(
        "Shows the math of every response and its reasoning typeset, for the rest of this session. Each key then "
        "takes longer to show the next transcript (the browser typesets every formula: about twice as long for a "
        "response with a hundred). Off, the math is shown as the model wrote it, and M typesets the response on "
        "screen."
    ))
    with st.expander("Tags (keys 1..9)"):
        st.session_state.setdefault("review_tag_text", "\n".join(state.get("tag_list") or []))
        st.text_area("One tag per line", key="review_tag_text")
        st.button("Save tags", key="save_tags", on_click=_save_tags)
        if state.get("tag_message"):
            st.error(escape_markdown(state["tag_message"]))  # it may quote a tag
