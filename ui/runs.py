"""Starting and watching background runs of one kind on a page (Generate, Evaluate): the Start run button,
progress, cancel, stale runs, the table, the latest run's log and (through `details`) what only its kind shows.

The runs panel is a fragment that reads the runs again every 2 s; the "Run N started" banner is drawn there, so
that it goes once run N has ended (its outcome is in the table).

Every button changes data and re-checks that the user may administer. The Start run button is drawn disabled in
the run its press causes, and gets a new key once a press started a run, so a second press that still arrives
(a double click sent before the new button reached the browser) belongs to the old button: Streamlit drops it
when the old button is gone, and when it is handled before that (even while the first press's run is still at
work: Streamlit's fast reruns), the press says which button it came from, so the duplicate `runs.create_run`
refuses is told as "Run N started". A press of the new button is refused with the reason. No clock decides it: a
loaded server handles the second press whenever it can.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from annotator import runs
from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.database.engine import DatabaseBusy, read_session
from annotator.database.models import Run
from annotator.database.vocabulary import RunStatus
from annotator.runs.kinds import RunKindSpec
from annotator.runs.llm import LLMConfigError
from ui.markdown import escape_markdown
from ui.writes import busy_message, page_write, saves, signed_out, writes

# session state: the button generation of a press of Start run being handled in this script run, or None
_STARTING = "run_starting"
_STARTED = "run_started"  # session state: the runs this session started (their number is the button's generation)
# session state: the button generations whose press began creating a run. Streamlit's fast reruns start the run of
# a double click's second press while the first press's run is still at work, so that one may not have finished
# (and said which run it made) when the second finds the duplicate.
_BEGUN = "run_start_begun"
_OUTCOME = "run_outcome"  # session state: what the last press gave (succeeded, message, run id or None)
LOG_BYTES = 8000  # how much of the end of a run's log the page shows


def _pressed(generation: int) -> None:
    st.session_state[_STARTING] = generation


def _started_runs() -> list[int]:
    return st.session_state.setdefault(_STARTED, [])


def start_button() -> bool:
    """The form's "Start run" button, disabled while a press of it is being handled; True when pressed.

    The press is read from its callback's mark: a button drawn disabled returns False even in the run its
    press caused. The button's key and its callback's argument are its generation (the runs this session
    started when it was drawn).
    """
    generation = len(_started_runs())
    pressed = st.session_state.get(_STARTING) is not None
    st.form_submit_button(
        "Start run",
        type="primary",
        disabled=pressed,
        key=f"start_run_{generation}",
        on_click=_pressed,
        args=(generation,),
    )
    return pressed


def start(engine: Engine, *, user: auth.User, submitted: bool, kind: RunKindSpec, options: Callable[[], Any]) -> None:
    """Handle a press of Start run: a run of `kind` with `options()` (the form's; raising RunError,
    LLMConfigError or ValueError with a message) is queued in a page write, then its process is started; the
    outcome shows after a rerun that enables the button again, in `show_runs`: a refusal until the next press,
    "Run N started" while run N is queued or running.
    """
    if submitted and _start(engine, user=user, kind=kind, options=options):
        st.rerun()
    st.session_state[_STARTING] = None


@writes(Capability.administer)  # starting a run changes data: checked against the database (None if refused)
def _start(engine: Engine, *, user: auth.User, kind: RunKindSpec, options: Callable[[], Any]) -> bool:
    try:
        st.session_state[_OUTCOME] = _started(engine, user=user, kind=kind, options=options)
    except auth.AccountDisabled as exc:
        signed_out(exc)
    finally:
        st.session_state[_STARTING] = None
    return True


def _started(
    engine: Engine, *, user: auth.User, kind: RunKindSpec, options: Callable[[], Any]
) -> tuple[bool, str, int | None]:
    """Create and start the run; (started, what to say, the run)."""
    generation = st.session_state.get(_STARTING) or 0
    begun: set[int] = st.session_state.setdefault(_BEGUN, set())
    same_press = generation in begun  # this button's press is being handled by another script run right now
    begun.add(generation)
    try:
        with page_write(engine, user=user) as session:
            run_id = kind.queue(session, options=options(), created_by=user.name)
    except runs.DuplicateRunError as exc:
        started = _started_runs()
        # a press of a button drawn before this session's last start: the second press of that start's click
        stale = generation < len(started) and exc.run_id == started[-1]
        if same_press or stale:
            return True, f"Run {exc.run_id} started.", exc.run_id
        begun.discard(generation)
        return False, str(exc), None
    except DatabaseBusy:
        begun.discard(generation)
        return False, busy_message("run"), None
    except (runs.RunError, LLMConfigError, ValueError) as exc:
        begun.discard(generation)
        return False, str(exc), None
    runs.start(engine, run_id=run_id)  # a process of its own unless a worker serves its kind
    _started_runs().append(run_id)
    return True, f"Run {run_id} started.", run_id


def _show_outcome(recent: list[Run]) -> None:
    """The last press's outcome: a refusal until the next press; "Run N started" until run N has ended."""
    outcome = st.session_state.get(_OUTCOME)
    if not outcome:
        return
    succeeded, message, run_id = outcome
    if succeeded:
        run = next((r for r in recent if r.id == run_id), None)
        if run is None or not runs.is_active(run):
            st.session_state.pop(_OUTCOME, None)
            return
    (st.success if succeeded else st.error)(escape_markdown(message))


def _messages() -> dict[str, Any]:
    return st.session_state.setdefault("runs_messages", {})  # a cancel or mark that was not saved


@saves(_messages, "cancel request", capability=Capability.administer)
def _cancel(engine: Engine, user: auth.User, run_id: int) -> None:
    with page_write(engine, user=user) as session:
        runs.request_cancel(session, run_id=run_id)


@saves(_messages, "change", capability=Capability.administer)
def _mark_failed(engine: Engine, user: auth.User, run_id: int) -> None:
    with page_write(engine, user=user) as session:
        runs.fail_stale(session, run_id=run_id, by=user.name)


def _show_active(engine: Engine, run: Run, units: str, user: auth.User) -> None:
    total = max(run.problems_total, 1)
    # Our words and the run's numbers only.
    if run.status == RunStatus.queued:
        label = (f"Run {run.id}: starting (its process is loading)" if run.pid is not None
                 else f"Run {run.id}: queued, waiting for a worker")
        if run.problems_done:  # a job some of whose parts are done, the rest waiting (or one handed back)
            label += f" ({run.problems_done} of {run.problems_total} {units} done)"
    else:  # the process writes its total as soon as it has claimed the run and counted its work
        label = (f"Run {run.id}: {run.status}, {run.problems_done} of {run.problems_total} {units} done, "
                f"{run.requests} requests sent, {run.cache_hits} answered from cache, {run.failures} failed")
    st.progress(run.problems_done / total, text=label)
    if run.cancel_requested:
        st.caption(f"Run {run.id}: cancelling...")
    else:
        st.button(f"Cancel run {run.id}", key=f"cancel-{run.id}", on_click=_cancel, args=(engine, user, run.id))


def _show_stale(engine: Engine, run: Run, reason: str, user: auth.User) -> None:
    """A run that says it is queued or running but whose worker is gone: say so, and let the admin end it (a
    running worker takes over a running one by itself)."""
    after = " A running worker takes it over, or mark it failed." if run.status == RunStatus.running else ""
    st.warning(f"Run {run.id} is stale: it says {run.status}, but {reason}. Its worker is gone.{after}")
    st.button(f"Mark run {run.id} failed", key=f"fail-{run.id}", on_click=_mark_failed,
              args=(engine, user, run.id))


def _show_log(engine: Engine, run: Run) -> None:
    """The end of the run's log (its process's output), as text; open while the run is at work."""
    tail = runs.log_tail(engine, run_id=run.id or 0, max_bytes=LOG_BYTES)
    if tail is None:
        return
    with st.expander(f"Run {run.id}: log (its last lines)", expanded=runs.is_active(run)):
        st.code(tail or "(nothing written yet)", language=None, wrap_lines=True)


def show_runs(engine: Engine, user: auth.User, *, kind: RunKindSpec,
              details: Callable[[Engine, Run], None] | None = None) -> None:
    """The newest runs of `kind`, refreshed every 2 s: each active run's progress (its units done) with a cancel
    button, stale runs with a button to mark them failed, a table (a row each: the kind's `describe`), the latest
    run's failed items, message, what only its kind shows (`details`) and its log."""

    @st.fragment(run_every=2)
    def fragment() -> None:
        if message := _messages().pop("message", None):
            st.warning(message)
        with read_session(engine) as session:
            recent = runs.recent_runs(session, kind=kind.kind, limit=20)
        _show_outcome(recent)
        if not recent:
            st.info("No runs yet.")
            return
        for run in recent:
            if reason := runs.stale_reason(run):
                _show_stale(engine, run, reason, user)
            elif runs.is_active(run):
                _show_active(engine, run, kind.units, user)
        st.dataframe(pd.DataFrame([kind.describe(r) for r in recent]), hide_index=True, width="stretch")
        latest: Run = recent[0]
        if latest.errors:
            with st.expander(f"Run {latest.id}: {len(latest.errors)} failed or unreadable item(s)"):
                # Model output is shown as text, never rendered.
                st.dataframe(pd.DataFrame(latest.errors), hide_index=True, width="stretch")
        if latest.message:
            st.text(f"Run {latest.id}: {latest.message}")
        if details is not None:
            details(engine, latest)
        _show_log(engine, latest)

    fragment()
