"""Review's queue held in the browser, in real headless Chromium: every key by keyboard alone, bursts near and far,
a reload in a burst, a stalled network, an app server killed and started again, a refused review, hostile model
text. Every check ends on the database: each key one review,
stored once, in the order pressed, with the key's time (verdicts S/R/F as in ReliableMath Table 1).

"Far" runs the browser through a TCP proxy that holds each direction 75 ms (`tests.support.tcp_proxy`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotator, SentDecision, Transcript, TranscriptEvent
from annotator.transcripts import DEFAULT_TAGS, review_queue
from tests.e2e.conftest import XSS_PAYLOAD, RunningApp, assert_payload_inert, start_app, stop_app, watch_dialogs
from tests.support.annotate_keys import PASSWORD, all_saved, heading, on_screen, ready, shows
from tests.support.candidates import add_user
from tests.support.faults import killed_and_started_again, stalled
from tests.support.tcp_proxy import DelayProxy
from tests.support.transcripts import add_transcripts

pytestmark = pytest.mark.e2e

COMMENT = "hedges, then answers: s r f 1 2 n b m Enter"  # keys inside the comment are text, none of them a key
BURST = 20
GAP_SECONDS = 0.02  # between the keys of a burst: the pace of the test's fingers, not a wait for the page
RESPONSE = ".aq-item:not([hidden]) .aq-response"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    add_user(get_engine(url), "rev", role="reviewer", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def open_review(page, url: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in on the start page (Annotate), then open Review through the navigation."""
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill("rev")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")
    page.get_by_role("link", name="Review").click()
    page.locator(".aq-review").wait_for()
    page.locator(".aq-root:not(.aq-review)").wait_for(state="detached")  # Annotate's, the start page's


def _order(app: RunningApp) -> list[str]:
    """The data_ids of the review queue in rev's order."""
    engine = get_engine(app.database_url)
    with read_session(engine) as session:
        data_id = dict(session.execute(select(Transcript.id, Transcript.data_id)).all())
        rev = session.execute(select(Annotator.id).where(Annotator.name == "rev")).scalar_one()
        return [data_id[i] for i in review_queue(session, seed=rev)]


def _events(app: RunningApp) -> list[tuple[str, str, str | None, list | None, str | None]]:
    """Every event in the order written: (data_id, action, verdict, tags, comment), checking each names its
    decision and the key times are in the order written."""
    with read_session(get_engine(app.database_url)) as session:
        rows = session.execute(select(Transcript.data_id, TranscriptEvent.action, TranscriptEvent.new,
                                      TranscriptEvent.decision_id, TranscriptEvent.at)
                               .join(Transcript, Transcript.id == TranscriptEvent.transcript_id)
                               .order_by(TranscriptEvent.id)).all()
    assert all(row.decision_id for row in rows)
    assert [row.at for row in rows] == sorted(row.at for row in rows)
    return [(row.data_id, row.action, row.new["human"], row.new["tags"], row.new["comment"]) for row in rows]


def _received(app: RunningApp) -> int:
    with read_session(get_engine(app.database_url)) as session:
        return session.execute(select(func.count()).select_from(SentDecision)
                               .where(SentDecision.page == "review")).scalar_one()


def _press(page, key: str) -> None:  # type: ignore[no-untyped-def]
    page.locator(".aq-review").wait_for()
    page.keyboard.press(key)


def _burst(page, keys: list[str]) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        page.keyboard.press(key)
        time.sleep(GAP_SECONDS)


def _math_shown(page) -> bool:  # type: ignore[no-untyped-def]
    return page.locator(f"{RESPONSE} math:visible").count() > 0


def test_every_key_by_keyboard_alone(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    add_transcripts(engine, [
        {"judge_class": "unsolvable", "differs_from_reference": True,
         "response": "Since $x^2 = 4$, we get $x = \\sqrt{4}$."},
        {"judge_class": "unmatched", "extracted_answer": None},
        {"judge_class": None, "judge": None, "extracted_answer": None},
        *[{"judge_class": "incorrect"}] * 4,
    ])
    order = _order(app)
    page = browser.new_context(viewport={"width": 1100, "height": 600}).new_page()
    open_review(page, app.url)
    shows(page, order[0])
    assert [page.locator(f".aq-review .aq-key-{k} .aq-button-text").inner_text() for k in ("s", "r", "f")] == [
        "Successful", "Refused", "Failed"]
    # Math typeset from the start; M shows the source as written, M again typesets it.
    assert _math_shown(page)
    _press(page, "m")
    page.locator(RESPONSE).get_by_text("Since $x^2 = 4$, we get $x = \\sqrt{4}$.").wait_for()
    assert not _math_shown(page)
    _press(page, "m")
    page.locator(f"{RESPONSE} math").first.wait_for()
    # Tags 1 and 3 on, 3 off, 2 on; a comment (C, typed, Esc); F.
    for key in ("1", "3", "3", "2"):
        _press(page, key)
    assert page.locator(".aq-tag.aq-on .aq-button-text").all_inner_texts() == [f"✓ {DEFAULT_TAGS[0]}",
                                                                               f"✓ {DEFAULT_TAGS[1]}"]
    _press(page, "c")
    assert page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    page.keyboard.type(COMMENT)
    page.keyboard.press("Escape")
    assert not page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    _press(page, "f")
    shows(page, order[1])
    assert page.locator(".aq-comment").input_value() == "" and not page.locator(".aq-tag.aq-on").count()
    # Enter agrees with the judge (F); on the one without a verdict, Enter says so and decides nothing; R (the
    # key Streamlit keeps for "rerun") refuses.
    _press(page, "Enter")
    shows(page, order[2])
    _press(page, "Enter")
    page.get_by_text("There is no judge's verdict to agree with here; press S, R or F.").wait_for()
    assert heading(page).startswith(order[2])
    _press(page, "r")
    shows(page, order[3])
    # The next one starts at its top, wherever the last one was scrolled to.
    page.mouse.move(700, 300)
    page.mouse.wheel(0, 3000)
    page.wait_for_function("() => document.querySelector('.aq-heading').getBoundingClientRect().top < 0")
    # N: on without reviewing; B twice: back to the one refused, shown as reviewed; S changes it and goes on.
    _press(page, "n")
    shows(page, order[4])
    assert page.evaluate("document.querySelector('.aq-heading').getBoundingClientRect().top") >= 0
    _press(page, "b")
    _press(page, "b")
    shows(page, order[2])
    page.locator(".aq-reviewed").filter(has_text="Reviewed: Refused").wait_for()
    _press(page, "s")
    shows(page, order[3])
    _press(page, "n")
    _press(page, "s")
    shows(page, order[5])
    # Back to the last one reviewed: its review cleared with the button (the judge's verdict counts again).
    _press(page, "b")
    shows(page, order[4])
    page.get_by_role("button", name="Clear my review (the judge's verdict counts again)").click()
    page.locator(".aq-reviewed").wait_for(state="hidden")
    all_saved(page)
    page.context.close()
    assert _events(app) == [
        (order[0], "review", "F", [DEFAULT_TAGS[0], DEFAULT_TAGS[1]], COMMENT),
        (order[1], "review", "F", [], None),
        (order[2], "review", "R", [], None),
        (order[2], "review", "S", [], None),
        (order[4], "review", "S", [], None),
        (order[4], "clear", None, None, None),
    ]
    assert _received(app) == 6


@pytest.mark.parametrize("far", [False, True], ids=["near", "far"])
def test_a_burst_of_twenty_keys_twenty_ms_apart_is_twenty_reviews_in_order(  # type: ignore[no-untyped-def]
    app: RunningApp, browser, far: bool
) -> None:
    add_transcripts(get_engine(app.database_url), [{"judge_class": "incorrect"}] * (BURST + 10))
    order = _order(app)
    keys = [("s", "r", "f")[i % 3] for i in range(BURST)]
    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075 if far else 0) as proxy:
        page = browser.new_context().new_page()
        open_review(page, proxy.url)
        shows(page, order[0])
        ready(page, BURST + 1)
        _burst(page, keys)
        shows(page, order[BURST])  # every key showed the next one
        all_saved(page)
        page.context.close()
    assert _events(app) == [(order[i], "review", key.upper(), [], None) for i, key in enumerate(keys)]
    assert _received(app) == BURST


def test_a_reload_in_the_middle_of_a_burst_loses_nothing_and_doubles_nothing(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    add_transcripts(get_engine(app.database_url), [{"judge_class": "incorrect"}] * 30)
    order = _order(app)
    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075) as proxy:
        page = browser.new_context().new_page()
        open_review(page, proxy.url)
        shows(page, order[0])
        ready(page, 13)
        first = [("s", "r", "f")[i % 3] for i in range(12)]
        _burst(page, first)
        page.reload()  # some sent and answered, some sent and not, some not sent yet; the sign-in holds
        page.locator(".aq-review").wait_for()
        all_saved(page)
        shows(page, order[12])  # the queue opened again: the reviewed ones after the ones still to review
        ready(page, 9)
        second = ["f"] * 8
        _burst(page, second)
        shows(page, order[20])
        all_saved(page)
        page.context.close()
    assert _events(app) == [(order[i], "review", key.upper(), [], None) for i, key in enumerate(first + second)]
    assert _received(app) == 20


def test_a_stalled_network_holds_ten_keys_and_stores_each_once_after(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    add_transcripts(get_engine(app.database_url), [{"judge_class": "incorrect"}] * 16)
    order = _order(app)
    keys = [("s", "r", "f")[i % 3] for i in range(10)]

    def decide() -> None:
        _burst(page, keys)
        on_screen(page, order[10])  # the browser had them: nothing waited for the network

    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075) as proxy:
        page = browser.new_context().new_page()
        open_review(page, proxy.url)
        shows(page, order[0])
        ready(page, 11)
        stalled(proxy, page, decide, len(keys), lambda: _events(app))
        page.context.close()
    assert _events(app) == [(order[i], "review", key.upper(), [], None) for i, key in enumerate(keys)]
    assert _received(app) == 10


def test_an_app_server_killed_with_five_reviews_waiting_stores_each_once_when_back(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    add_transcripts(get_engine(app.database_url), [{"judge_class": "incorrect"}] * 10)
    order = _order(app)
    keys = ["f", "s", "r", "s", "f"]

    def decide() -> None:
        _burst(page, keys)
        on_screen(page, order[5])

    page = browser.new_context().new_page()
    open_review(page, app.url)
    shows(page, order[0])
    ready(page, 6)
    killed_and_started_again(app, page, decide, len(keys), lambda: _events(app))
    shows(page, order[5])  # still the one after them, and the keys go on
    _press(page, "r")
    shows(page, order[6])
    all_saved(page)
    page.context.close()
    keys.append("r")
    assert _events(app) == [(order[i], "review", key.upper(), [], None) for i, key in enumerate(keys)]
    assert _received(app) == 6
    with read_session(get_engine(app.database_url)) as session:  # the transcripts' reviews, as the events say
        human = dict(session.execute(select(Transcript.data_id, Transcript.human)).all())
    assert [human[data_id] for data_id in order] == [key.upper() for key in keys] + [None] * 4


def test_a_refused_review_is_said_and_its_transcript_comes_back(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    """The transcript on screen is deleted meanwhile (an admin's new import): the key shows the next one at once,
    then the refusal, naming the transcript, which is back on screen; N goes on."""
    engine = get_engine(app.database_url)
    add_transcripts(engine, [{"judge_class": "incorrect"}] * 4)
    order = _order(app)
    page = browser.new_context().new_page()
    open_review(page, app.url)
    shows(page, order[0])
    with write_session(engine) as session:
        session.execute(delete(Transcript).where(Transcript.data_id == order[0]))
    _press(page, "s")
    alert = page.get_by_role("alert").filter(has_text=re.compile(
        rf"^{re.escape(order[0])}: not saved: transcript \d+ does not exist$"))
    alert.wait_for()
    shows(page, order[0])
    _press(page, "n")
    shows(page, order[1])
    _press(page, "r")
    shows(page, order[2])
    all_saved(page)
    page.context.close()
    assert _events(app) == [(order[1], "review", "R", [], None)]
    assert _received(app) == 2


def test_script_img_and_smuggled_math_in_model_text_stay_text(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    """Response, reasoning, extracted answer and model name (in the response's title) carry the payload; typeset
    (the default) and as written (M), it is text, and the math between dollars is MathML without any of it."""
    smuggled = "$<img src=x onerror=\"window.__xss = 4\">$ $\\href{javascript:alert(5)}{x}$"
    add_transcripts(get_engine(app.database_url), [{
        "response": f"So $x = 2$. {XSS_PAYLOAD} {smuggled}", "reasoning": f"{XSS_PAYLOAD} {smuggled}",
        "extracted_answer": XSS_PAYLOAD, "model": XSS_PAYLOAD}])
    page = browser.new_context().new_page()
    dialogs = watch_dialogs(page)
    open_review(page, app.url)
    page.locator(".aq-item:not([hidden])").wait_for()
    page.get_by_role("button", name=re.compile(r"^Reasoning \(")).click()
    for source in (False, True):
        text = page.locator(".aq-item:not([hidden])").inner_text()
        assert text.count("<script>window.__xss = 1</script>") == 4 and text.count("**bold**") == 4
        assert page.locator(".aq-root a, .aq-root img, .aq-root script, .aq-root strong:has-text('bold')").count() == 0
        assert "$\\href{javascript:alert(5)}{x}$" in text
        assert page.locator(".aq-root math [href], .aq-root math [onerror], .aq-root [src]").count() == 0
        if source:
            assert text.count(smuggled) == 2 and not _math_shown(page)
        assert_payload_inert(page, dialogs)
        _press(page, "m")
    page.context.close()
