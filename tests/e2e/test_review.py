"""The Review page in real headless Chromium: ten transcripts reviewed with the keyboard only (overrides,
Enter agreeing with the judge, tag toggles, a comment), then the events and effective verdicts checked in the
database exactly as pressed (issue 10, item 4; verdicts S/R/F as in ReliableMath Table 1)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Transcript, TranscriptEvent
from annotator.transcripts import DEFAULT_TAGS, EFFECTIVE_VERDICT
from tests.e2e.conftest import (
    XSS_PAYLOAD,
    RunningApp,
    assert_payload_inert,
    open_page,
    start_app,
    stop_app,
    watch_dialogs,
)
from tests.support.candidates import add_user
from tests.support.transcripts import add_transcripts

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse"
BUTTONS = {"s": "verdict_S", "r": "verdict_R", "f": "verdict_F", "Enter": "agree"}
# For the i-th transcript shown: the tag keys pressed (in order; pressing one twice takes it off again) and
# the verdict key.
PRESSES = [
    (["1", "3"], "f"), ([], "Enter"), ([], "r"), ([], "s"), (["2"], "Enter"),
    (["6"], "r"), ([], "f"), ([], "Enter"), (["4", "4", "5"], "s"), ([], "r"),
]
COMMENT_AT = 3


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    engine = get_engine(url)
    add_user(engine, "rev", role="reviewer", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def open_review(page, url: str) -> None:  # type: ignore[no-untyped-def]
    open_page(page, url, name="rev", password=PASSWORD, link="Review")


def settled(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")


def shown(page) -> str:  # type: ignore[no-untyped-def]
    """The data_id of the transcript on screen, once its heading is there and the run has ended."""
    heading = page.get_by_role("heading", name=re.compile(r"^\S+ · math · "))
    heading.wait_for()
    settled(page)
    return heading.inner_text().split(" · ")[0]


def press(page, key: str, button: str) -> None:  # type: ignore[no-untyped-def]
    """Press a key once its button is on the page (as on Annotate: a shortcut whose button is not mounted
    yet does nothing), and for R once the script that gives Streamlit's reserved key to the button is in."""
    page.locator(f".st-key-{button} button").wait_for()
    if key == "r":
        page.wait_for_function("window.__annotatorKeysBound === true")
    page.keyboard.press(key)


def test_review_ten_transcripts_with_the_keyboard_only(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    specs = [{"judge_class": "incorrect"}] * 6 + [
        {"judge_class": "unmatched", "extracted_answer": None},
        {"judge_class": None, "judge": None, "extracted_answer": None},
        {"judge_class": "unsolvable", "rules_disagree": True},
        {"judge_class": "unknown"},
    ]
    tids = add_transcripts(engine, specs)
    with read_session(engine) as session:
        judge = dict(session.execute(select(Transcript.data_id, Transcript.judge)).all())
        data_id_of = dict(session.execute(select(Transcript.id, Transcript.data_id)).all())
    context = browser.new_context()
    page = context.new_page()
    open_review(page, app.url)
    expected: dict[str, tuple[str, list[str], str | None]] = {}
    order = []
    for i, (tag_keys, verdict_key) in enumerate(PRESSES):
        data_id = shown(page)
        order.append(data_id)
        tags: list[str] = []
        for key in tag_keys:
            press(page, key, f"tag_{key}")
            tag = DEFAULT_TAGS[int(key) - 1]
            tags = [t for t in tags if t != tag] if tag in tags else [*tags, tag]
            kind = "primary" if tag in tags else "secondary"
            page.locator(f".st-key-tag_{key} [data-testid=stBaseButton-{kind}]").wait_for()
            settled(page)
        comment = None
        if i == COMMENT_AT:
            comment = "hedges, then answers"
            field = page.get_by_placeholder(re.compile("^Comment"))
            field.fill(comment)
            field.press("Enter")
            settled(page)
            field.press("Escape")
        verdict = judge[data_id] if verdict_key == "Enter" else verdict_key.upper()
        if verdict_key == "Enter" and verdict is None:
            pytest.fail(f"{data_id} has no judge verdict to agree with")
        press(page, verdict_key, BUTTONS[verdict_key])
        expected[data_id] = (verdict, tags, comment)
        if i < len(PRESSES) - 1:
            page.get_by_role("heading", name=re.compile(rf"^{re.escape(data_id)} ·")).wait_for(state="detached")
    page.get_by_role("heading", name="Nothing left to review").wait_for()
    context.close()

    # The queue's order: the rule sets' disagreement, then the two the judge is unsure of, then the sample.
    assert order[:3] == [data_id_of[tids[8]], data_id_of[tids[6]], data_id_of[tids[7]]]
    assert sorted(order) == sorted(data_id_of.values())
    with read_session(engine) as session:
        stored = {
            row.data_id: (row.human, row.tags, row.comment)
            for row in session.execute(select(Transcript.data_id, Transcript.human, Transcript.tags,
                                              Transcript.comment))
        }
        effective = dict(session.execute(select(Transcript.data_id, EFFECTIVE_VERDICT)).all())
        events = session.execute(
            select(TranscriptEvent.transcript_id, TranscriptEvent.action, TranscriptEvent.old, TranscriptEvent.new)
            .order_by(TranscriptEvent.id)
        ).all()
    assert stored == expected
    assert effective == {data_id: verdict for data_id, (verdict, _, _) in expected.items()}
    empty = {"human": None, "tags": None, "comment": None}
    assert [(data_id_of[e.transcript_id], e.action, e.old, e.new) for e in events] == [
        (data_id, "review", empty, {"human": v, "tags": t, "comment": c}) for data_id, (v, t, c) in expected.items()
    ]


RESPONSE = ".st-key-response"


def test_math_is_shown_as_written_until_m_typesets_it(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    add_transcripts(engine, [{"response": f"Since $x^2 = {k * k}$, we get $x = \\sqrt{{{k * k}}}$."}
                             for k in (2, 3)])
    context = browser.new_context()
    page = context.new_page()
    open_review(page, app.url)
    first = shown(page)
    response = page.locator(RESPONSE)
    # By default: the math source as the model wrote it, in a text element, nothing typeset.
    source = re.compile(r"^Since \$x\^2 = \d\$, we get \$x = \\sqrt\{\d\}\$\.$")
    response.locator("[data-testid=stText]").filter(has_text=source).wait_for()
    assert response.locator(".katex").count() == 0
    # M: the same response typeset (KaTeX), its source no longer shown as text.
    press(page, "m", "typeset_math")
    response.locator(".katex").first.wait_for()
    settled(page)
    assert response.locator("[data-testid=stText]").count() == 0
    annotations = response.locator(".katex-mathml annotation").all_text_contents()
    assert annotations in ([f"x^2 = {k * k}", f"x = \\sqrt{{{k * k}}}"] for k in (2, 3))
    page.locator(".st-key-typeset_math [data-testid=stBaseButton-primary]").wait_for()
    # M again: text again. Then the next transcript comes as text too (M was for the one on screen).
    press(page, "m", "typeset_math")
    response.locator("[data-testid=stText]").wait_for()
    assert response.locator(".katex").count() == 0
    press(page, "m", "typeset_math")
    response.locator(".katex").first.wait_for()
    settled(page)
    press(page, "s", "verdict_S")
    page.get_by_role("heading", name=re.compile(rf"^{re.escape(first)} ·")).wait_for(state="detached")
    shown(page)
    response.locator("[data-testid=stText]").filter(has_text=source).wait_for()
    assert response.locator(".katex").count() == 0
    context.close()


def test_the_sidebar_setting_typesets_every_response_and_the_next_key_decides(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    """The setting switched with a click lets go of the focus (`ui.keys`): the next key decides, and the next
    response comes typeset too."""
    engine = get_engine(app.database_url)
    add_transcripts(engine, [{"response": f"So $y = {k}$."} for k in (1, 2)])
    context = browser.new_context()
    page = context.new_page()
    open_review(page, app.url)
    first = shown(page)
    response = page.locator(RESPONSE)
    response.locator("[data-testid=stText]").wait_for()
    page.get_by_text("Typeset math in every response").click()
    response.locator(".katex").wait_for()
    page.wait_for_function("document.activeElement === document.body")
    press(page, "s", "verdict_S")
    page.get_by_text(f"Saved {first}: Successful.").wait_for()
    shown(page)
    response.locator(".katex").wait_for()
    assert response.locator("[data-testid=stText]").count() == 0
    context.close()


def _payload_is_text(page) -> None:  # type: ignore[no-untyped-def]
    """The payload on the page as text: model name, response, extracted answer and reasoning."""
    page.get_by_text("<script>window.__xss = 1</script>").first.wait_for()
    page.wait_for_function(
        "() => document.body.innerText.split('<img src=\"x\" onerror=\"window.__xss = 2\">').length - 1 >= 4"
    )
    assert page.get_by_text("**bold**").count() >= 3
    assert page.locator(f"{RESPONSE} a, {RESPONSE} img, {RESPONSE} strong:has-text('bold')").count() == 0


def test_script_and_img_in_a_response_do_not_execute(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    """As text (the default) and typeset (M): the payload stays text."""
    engine = get_engine(app.database_url)
    payload = XSS_PAYLOAD
    add_transcripts(engine, [{"response": f"So $x = 2$. {payload}", "reasoning": payload,
                              "extracted_answer": payload, "model": payload}])
    context = browser.new_context()
    page = context.new_page()
    dialogs = watch_dialogs(page)
    open_review(page, app.url)
    shown(page)
    page.get_by_text(re.compile(r"^Reasoning \(")).click()  # the collapsed reasoning, opened
    page.locator(f"{RESPONSE} [data-testid=stText]").wait_for()
    _payload_is_text(page)
    assert_payload_inert(page, dialogs)
    press(page, "m", "typeset_math")
    page.locator(f"{RESPONSE} .katex").wait_for()
    settled(page)
    assert page.locator(f"{RESPONSE} [data-testid=stText]").count() == 0
    _payload_is_text(page)
    assert_payload_inert(page, dialogs)
    context.close()
