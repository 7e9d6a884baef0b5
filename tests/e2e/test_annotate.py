"""The annotate page in real headless Chromium: sign in, label with the keyboard only, reload, go back.

The database is checked directly afterwards: exactly the expected labels and events, nothing lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from annotator.accounts import auth
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotation, AnnotationEvent, Candidate, CandidateClaim
from tests.e2e.conftest import XSS_PAYLOAD, RunningApp, assert_payload_inert, start_app, stop_app, watch_dialogs
from tests.support.annotate_keys import PASSWORD, all_saved, press, shows, sign_in
from tests.support.candidates import add_candidates, add_user

pytestmark = pytest.mark.e2e

# Key pressed for the i-th candidate and the label it records.
KEYS = {"1": (1, 0), "2": (1, 1), "0": (0, None)}
PATTERN = ["1", "2", "0", "1", "1"]


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "ann", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def test_label_twenty_with_the_keyboard_reload_and_change_one(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    ids = add_candidates(engine, 25, data_source="aime")
    data_ids = [f"aime_{i}_{'remove' if i % 2 == 0 else 'contradict'}_1" for i in range(25)]
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app.url)
    shows(page, data_ids[0])
    expected: dict[int, tuple[int, int | None]] = {}
    for i in range(20):
        if i == 10:
            # A reload mid-way keeps the sign-in (cookie) and resumes on the same candidate.
            page.reload()
            shows(page, data_ids[10])
        key = PATTERN[i % len(PATTERN)]
        press(page, key)
        expected[ids[i]] = KEYS[key]
        shows(page, data_ids[i + 1])

    # Back twice: the last labelled, then the one before; change that one from "1" to "0".
    press(page, "b")
    shows(page, data_ids[19])
    press(page, "b")
    shows(page, data_ids[18])
    page.get_by_text("You labelled this one").wait_for()
    press(page, "0")
    expected[ids[18]] = (0, None)
    # After a changed label the page moves forward through my labels, then S returns to the queue.
    shows(page, data_ids[19])
    press(page, "s")
    shows(page, data_ids[20])
    all_saved(page)
    context.close()

    with read_session(engine) as session:
        labels = {
            row.candidate_id: (row.human_check, row.difficulty_eval)
            for row in session.execute(
                select(Annotation.candidate_id, Annotation.human_check, Annotation.difficulty_eval)
            )
        }
        events = session.execute(
            select(AnnotationEvent.candidate_id, AnnotationEvent.action, AnnotationEvent.old, AnnotationEvent.new)
            .order_by(AnnotationEvent.id)
        ).all()
        counts = dict(session.execute(select(Candidate.id, Candidate.label_count)).all())
        claims = session.execute(select(CandidateClaim.candidate_id)).scalars().all()
    assert labels == expected
    assert [(e.candidate_id, e.action) for e in events] == [(ids[i], "create") for i in range(20)] + [
        (ids[18], "update")
    ]
    update = events[-1]
    assert update.old == {"human_check": 1, "difficulty_eval": 0, "comment": None}
    assert update.new == {"human_check": 0, "difficulty_eval": None, "comment": None}
    assert [counts[candidate_id] for candidate_id in ids] == [1] * 20 + [0] * 5
    assert sorted(claims) == ids[20:]  # the one on screen and those held ahead in the browser


def test_script_and_img_in_a_candidate_do_not_execute(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    payload = XSS_PAYLOAD
    add_candidates(
        engine,
        1,
        rewritten_question=f"Find $x$. {payload}",
        llm_outputs={"verification": payload, "verdicts": [{"model": "m", "verdict": payload}]},
        extra={"checks": [{"name": "treecut", "verdict": payload, "detail": payload}]},
    )
    context = browser.new_context()
    page = context.new_page()
    dialogs = watch_dialogs(page)
    sign_in(page, app.url)
    shows(page, "math_0_remove_1")
    # The full model outputs and checks are one click away.
    page.get_by_role("button", name="Model outputs").click()
    page.get_by_text("treecut:").first.wait_for()
    # The payload is on the page as text, in the question, the model output and the check.
    page.get_by_text("<script>window.__xss = 1</script>").first.wait_for()
    assert page.get_by_text('<img src="x" onerror="window.__xss = 2">').count() >= 3
    assert page.get_by_text("**bold**").count() >= 3
    assert_payload_inert(page, dialogs)
    context.close()


def test_a_keypress_notices_a_disabled_account(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """A decision key reruns only the annotate page's fragment, not app.py; once the session re-check is due
    the page still makes it, so a disabled account is signed out on its next keypress, which records nothing."""
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "ann", password=PASSWORD)
    ids = add_candidates(engine, 5, data_source="aime")
    running = start_app(url, tmp_path / "streamlit.log", env={"ANNOTATOR_SESSION_RECHECK_SECONDS": "0"})
    try:
        context = browser.new_context()
        page = context.new_page()
        sign_in(page, running.url)
        shows(page, "aime_0_remove_1")
        press(page, "1")
        shows(page, "aime_1_contradict_1")
        all_saved(page)  # still signed in: the re-check found the session valid
        with write_session(engine) as session:
            auth.set_active(session, name="ann", active=False)
        press(page, "2")
        page.get_by_text("Your session ended; please sign in again.").wait_for()
        assert page.locator(".aq-root").count() == 0
        context.close()
    finally:
        stop_app(running)
    # The key that found the account disabled recorded nothing: only the label from before is there.
    with read_session(engine) as session:
        labels = session.execute(select(Annotation.candidate_id, Annotation.human_check)).all()
        claims = session.execute(select(CandidateClaim.candidate_id)).scalars().all()
    assert [tuple(row) for row in labels] == [(ids[0], 1)]
    assert claims == []
